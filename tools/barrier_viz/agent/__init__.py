"""The agent surface: one tool registry shared with the CLI, the prompts, and the Claude loop.

Nothing here imports `anthropic` at module import time: the CLI must start fast for agents that
only call the deterministic commands, and the SDK is an optional extra (`barrier-viz[agent]`).
"""

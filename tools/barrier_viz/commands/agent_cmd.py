"""`agent`: let Claude compose the report from the tools, and write the debug_helper files."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError

DEFAULT_OUT = "barrier-viz-agent"


def run_agent_command(
    input: str,
    *,
    unit: str | None,
    func: str | None,
    model: str | None,
    max_turns: int,
    out: str | None,
) -> tuple[int, str]:
    """Check everything that can be checked without the API, run the loop, summarise.

    Returns (exit code, summary). Bad input, a bad selector, a missing key or SDK raise before
    any request is sent, so a mistake costs no tokens.
    """
    from ..agent.loop import AgentConfig, api_key_from_env, make_client, resolve_model, run_agent
    from ..session import select

    if input == "-":
        raise InputError("<stdin>", "the agent calls several tools on its input, so it needs a file, not stdin")
    if max_turns < 1:
        raise InputError("--max-turns", "must be at least 1")
    key = api_key_from_env()
    select(input, unit, func)  # parse once now: a bad path or selector fails here, exit 2
    client = make_client(key)
    config = AgentConfig(
        input=input, unit=unit, func=func, model=resolve_model(model), max_turns=max_turns, out_dir=Path(out or DEFAULT_OUT)
    )
    result = run_agent(config, client, secrets=[key])
    status = result.status
    summary = "\n".join(
        [
            f"status: {status.status} ({status.reason})",
            f"report: {status.report_path}",
            f"insights: {status.logs_path}",
            f"transcript: {result.transcript_path}",
            f"turns: {result.turns}, tool calls: {result.tool_calls}, tokens in/out: {result.usage.get('input_tokens', 0)}/{result.usage.get('output_tokens', 0)}",
        ]
    )
    return (3 if status.status == "failed" else 0), summary

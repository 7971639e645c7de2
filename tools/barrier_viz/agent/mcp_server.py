"""`barrier-viz mcp`: the tool registry served to any MCP client over stdio.

Claude Code, Codex or any other Model Context Protocol client gets the tools the agent loop
uses (`agent/registry.py`), with the same names, descriptions and input JSON schemas, and the
same documents the CLI prints with `--format json`. Two limits keep a client from turning the
server into something else:

- **Paths.** A tool's `input` must resolve (symlinks followed) inside one of the server's roots:
  the folders given with `--root`, else the folder the client started the server in. `-`
  (stdin) is refused: the server's stdin is the protocol stream. This is the agent loop's rule
  ("only the input you were given") widened from one file to the folders a person named.
- **Size.** A result is at most `registry.MAX_RESULT_CHARS` characters of JSON, cut the way
  the agent loop cuts it, with a note naming the arguments that narrow the call; a result that
  fits also comes back as structured content.

The `mcp` package is imported when the server starts, never when the CLI does (it is part of
the `agent` extra).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from .. import __version__
from .registry import MAX_RESULT_CHARS, REGISTRY, Registry, ToolError, bounded_result

SERVER_NAME = "barrier-viz"
INSTRUCTIONS = (
    "barrier-viz audits mbarrier synchronization of warp-specialized Triton kernels from their IR "
    "(TTGIR, MLIR dumps, lit files, MLIR_ENABLE_DUMP logs, Triton dump folders). Call `report` with "
    "compact: true first (every section, one line per fact), `inputs` first on dumps and multi-module files, "
    "and a per-section tool only for detail. `check` holds the verdicts: never call a deadlock that it does not report."
)


class RootPolicy:
    """Which inputs the server may read: paths inside its roots."""

    def __init__(self, roots: Sequence[str | Path]):
        self.roots = [Path(r).expanduser().resolve() for r in roots]

    def check(self, arguments: dict[str, Any]) -> None:
        given = arguments.get("input")
        if not isinstance(given, str):
            return  # the tool's own validation reports a missing or mistyped input
        if given.strip() == "-":
            raise ToolError("input '-' (stdin) is not available over MCP: the server's stdin carries the protocol; pass a file path")
        resolved = Path(given).expanduser().resolve()
        if not any(resolved == root or resolved.is_relative_to(root) for root in self.roots):
            allowed = ", ".join(str(r) for r in self.roots)
            raise ToolError(f"input {given!r} resolves to {resolved}, outside the server's roots ({allowed}); "
                            "start the server with --root to allow another folder")


def call_tool(registry: Registry, policy: RootPolicy, name: str, arguments: dict[str, Any] | None,
              limit: int = MAX_RESULT_CHARS) -> tuple[str, Any, bool]:
    """Run one tool as the server does: (text, structured content or None, is_error).

    Kept free of the `mcp` package so the path and size rules are testable on their own."""
    arguments = dict(arguments or {})
    try:
        tool = registry.get(name)
        policy.check(arguments)
        data = tool.call_json(arguments)
    except ToolError as exc:
        return str(exc), None, True
    except Exception as exc:  # noqa: BLE001 - an analysis bug must not kill the session; the client reports it
        return f"internal error in tool {name}: {type(exc).__name__}: {' '.join(str(exc).split())}", None, True
    text, cut = bounded_result(json.dumps(data, ensure_ascii=False), limit)
    return text, (None if cut else data), False


def build_server(roots: Sequence[str | Path], registry: Registry = REGISTRY) -> Any:
    """The low-level MCP server with the registry's tools (needs the `mcp` package)."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    policy = RootPolicy(roots)
    tools = [types.Tool(name=s["name"], description=s["description"], input_schema=s["input_schema"],
                        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False))
             for s in registry.api_schemas()]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call(ctx: Any, params: Any) -> Any:
        import anyio

        # The analyses are synchronous and CPU-bound: run them off the event loop so pings and
        # cancellations are still answered.
        text, structured, is_error = await anyio.to_thread.run_sync(call_tool, registry, policy, params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured, is_error=is_error)

    return Server(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call)


def serve_stdio(roots: Sequence[str | Path]) -> None:
    """Serve over stdin/stdout until the client closes the stream."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(roots)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)

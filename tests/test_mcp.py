"""`barrier-viz mcp`: the agent registry's tools over stdio, seen by a real MCP client session
(the `mcp` package's own client spawning the server as a subprocess, as Claude Code or Codex
would). It must list every registry tool with the registry's JSON schema, return the same JSON
as the CLI for `check` and `report --format compact` (the digest, rendered back to the CLI's
exact text), on a persistent GEMM and on a hand-written 2-CTA cluster kernel, and refuse inputs
outside its roots and stdin."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from barrier_viz.agent.mcp_server import RootPolicy, call_tool
from barrier_viz.agent.registry import REGISTRY, ToolError
from barrier_viz.commands.digest import DigestDoc, digest_text
from cli_support import run_cli

pytest.importorskip("mcp")

REPO = Path(__file__).resolve().parents[1]
FIXTURES = ["tests/fixtures/gemm_ws_persistent.ttgir", "tests/fixtures/cluster/paired_ws.ttgir"]


def test_root_policy_refuses_stdin_and_paths_outside_the_roots(tmp_path: Path) -> None:
    policy = RootPolicy([REPO / "tests"])
    policy.check({"input": str(REPO / FIXTURES[0])})
    with pytest.raises(ToolError, match="stdin"):
        policy.check({"input": "-"})
    with pytest.raises(ToolError, match="outside the server's roots"):
        policy.check({"input": str(REPO / "README.md")})
    escape = tmp_path / "out.ttgir"  # a link inside a root that leads out of it is refused too
    escape.write_text("module {}\n")
    inner = tmp_path / "root"
    inner.mkdir()
    (inner / "link.ttgir").symlink_to(escape)
    with pytest.raises(ToolError, match="outside"):
        RootPolicy([inner]).check({"input": str(inner / "link.ttgir")})


def test_results_are_bounded_and_errors_are_results() -> None:
    policy = RootPolicy([REPO])
    text, structured, is_error = call_tool(REGISTRY, policy, "ops", {"input": FIXTURES[0], "include_all": True}, limit=2000)
    assert not is_error and structured is None
    assert len(text) < 2200 and text.endswith("drop include_all]") and "[truncated:" in text
    text, structured, is_error = call_tool(REGISTRY, policy, "check", {"input": FIXTURES[0], "bogus": 1})
    assert is_error and "invalid arguments for check" in text
    text, _, is_error = call_tool(REGISTRY, policy, "nope", {"input": FIXTURES[0]})
    assert is_error and "unknown tool" in text


async def _session_results() -> dict:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "tools"), os.environ.get("PYTHONPATH", "")) if p)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "barrier_viz", "mcp", "--root", "tests"],
                                   env=env, cwd=str(REPO))
    out: dict = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            out["tools"] = (await session.list_tools()).tools
            for path in FIXTURES:
                check = await session.call_tool("check", {"input": path})
                digest = await session.call_tool("report", {"input": path, "compact": True})
                out[path] = (check, digest)
            out["outside"] = await session.call_tool("check", {"input": "README.md"})
    return out


@pytest.fixture(scope="module")
def session_results() -> dict:
    import anyio

    return anyio.run(_session_results)


def test_session_lists_every_registry_tool_with_its_schema(session_results) -> None:
    listed = {t.name: t for t in session_results["tools"]}
    assert list(listed) == REGISTRY.names()
    for schema in REGISTRY.api_schemas():
        tool = listed[schema["name"]]
        assert tool.description == schema["description"]
        assert tool.input_schema == schema["input_schema"]


@pytest.mark.parametrize("path", FIXTURES)
def test_check_and_compact_report_equal_the_cli(session_results, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    monkeypatch.chdir(REPO)  # the CLI is given the same relative path the client passed
    check, digest = session_results[path]
    assert not check.is_error and not digest.is_error
    cli_check = run_cli("check", path, "--format", "json")
    assert cli_check.exit_code in (0, 1), cli_check.stderr
    assert json.loads(check.content[0].text) == cli_check.json()
    assert check.structured_content == cli_check.json()

    served = json.loads(digest.content[0].text)
    assert served == digest.structured_content
    cli_compact = run_cli("report", path, "--format", "compact")
    assert cli_compact.exit_code == 0, cli_compact.stderr
    assert digest_text(DigestDoc.model_validate(served)) == cli_compact.stdout


def test_cluster_fixture_is_judged_as_a_cluster(session_results) -> None:
    check, digest = session_results[FIXTURES[1]]
    sections = json.loads(digest.content[0].text)["sections"]
    assert any("cluster: 2 CTAs" in row for row in sections["partitions"])
    assert any("cross-CTA" in row for row in sections["graph"])


def test_inputs_outside_the_roots_come_back_as_tool_errors(session_results) -> None:
    outside = session_results["outside"]
    assert outside.is_error and "outside the server's roots" in outside.content[0].text

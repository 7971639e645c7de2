"""One registry of tools, shared by the CLI's JSON output and the agent's tool-use loop.

A tool is a command's JSON document exposed as a function: it validates its arguments with a
pydantic model (whose JSON schema is what the Messages API sees), builds the document with the
same `commands/` builder the CLI calls, and returns the same pydantic document the CLI prints
with `--format json`. The agent therefore reads exactly what a person would read from the CLI,
and a change to a command shows up in both surfaces at once.

Adding a tool for a new command module is one line at the bottom of this file, e.g.::

    register(unit_tool("partitions", "...", "partitions_cmd:partitions_document"))

Builders are named as "module:function" strings and imported on first call, so importing the
registry (and the CLI) stays cheap.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError


class ToolInput(BaseModel):
    """Arguments every tool takes: the IR input. Unknown keys are rejected, so a model that
    invents an option hears about it instead of silently getting defaults."""

    model_config = ConfigDict(extra="forbid")

    input: str = Field(description="IR file (.ttgir, .mlir, dump .txt, .gz) or dump directory, as given to the CLI.")


class UnitInput(ToolInput):
    """Arguments of every command that analyses one unit (all but `inputs`)."""

    unit: str | None = Field(
        None,
        description="Unit selector: an index from `inputs`, a label substring (e.g. doCodePartition), or last-ws. "
        "Omit for the default unit (the last warp-specialized TTGIR unit).",
    )
    func: str | None = Field(None, description="Function to analyse (name, with or without @). Omit for all functions.")


class OpsInput(UnitInput):
    include_all: bool = Field(
        False,
        description="List every operation written in the text, not only barrier-relevant ones. Large: avoid unless needed.",
    )
    partition: str | None = Field(None, description="Only the ops of this partition (`main`: outside every partition).")
    lines: str | None = Field(None, description="Only the ops starting in this 1-based line range: `A-B`, `A`, `A-` or `-B`.")


class ReportInput(UnitInput):
    compact: bool = Field(
        False,
        description="Return the digest (one line per fact for every section, about a sixth of the IR's size) "
        "instead of every section's full document. Use true unless you need a full document.",
    )
    simulate: bool = Field(True, description="Also run the kernel's barrier program for deadlock witnesses (slower).")


class CheckInput(UnitInput):
    simulate: bool = Field(
        True, description="Also run the kernel's barrier program on symbolic schedules to find deadlock witnesses (slower)."
    )


@dataclass(frozen=True)
class Tool:
    """A command seen as a function: name, description for the model, argument model, runner.

    `runner` receives validated arguments and returns the command's pydantic document.
    `feeds` names the report sections the document supplies (keys of `prompts.SECTIONS`), so
    the prompt can tell the model which tool to call for which section.
    """

    name: str
    description: str
    input_model: type[ToolInput]
    runner: Callable[[ToolInput], BaseModel]
    feeds: tuple[str, ...] = ()

    def api_schema(self) -> dict[str, Any]:
        """The tool definition the Messages API expects (`name`, `description`, `input_schema`)."""
        schema = _clean_schema(self.input_model.model_json_schema())
        schema.pop("description", None)  # the model's docstring is for developers, not the agent
        return {"name": self.name, "description": self.description, "input_schema": schema}

    def call(self, arguments: dict[str, Any]) -> BaseModel:
        """Validate `arguments` and run the tool; raises `ToolError` for anything the caller
        (a model or a person) can fix by changing the arguments or the input."""
        try:
            args = self.input_model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors())
            raise ToolError(f"invalid arguments for {self.name}: {problems}") from exc
        try:
            return self.runner(args)
        except InputError as exc:
            raise ToolError(str(exc)) from exc

    def call_json(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The document as plain JSON data, keyed exactly as `--format json` prints it."""
        return self.call(arguments).model_dump(mode="json", by_alias=True)


# The most characters of one tool result a model is handed (the agent loop and the MCP server):
# the largest real dump's full `ops --all` would otherwise fill a context window by itself.
MAX_RESULT_CHARS = 200_000


def bounded_result(text: str, limit: int = MAX_RESULT_CHARS) -> tuple[str, bool]:
    """`text` cut to `limit` characters with a note saying how to narrow the call, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"\n[truncated: {len(text)} characters; narrow the call with unit/func or drop include_all]", True


class ToolError(Exception):
    """A tool could not produce its document for these arguments (bad input, bad selector,
    bad argument). The agent loop returns it to the model as an `is_error` tool result."""


@dataclass
class Registry:
    """The ordered set of tools; order is the order the prompt lists them in."""

    tools: dict[str, Tool] = field(default_factory=dict)

    def add(self, tool: Tool) -> Tool:
        if tool.name in self.tools:
            raise ValueError(f"tool {tool.name!r} registered twice")
        self.tools[tool.name] = tool
        return tool

    def get(self, name: str) -> Tool:
        try:
            return self.tools[name]
        except KeyError:
            raise ToolError(f"unknown tool {name!r}; available: {', '.join(self.tools)}") from None

    def names(self) -> list[str]:
        return list(self.tools)

    def api_schemas(self) -> list[dict[str, Any]]:
        return [t.api_schema() for t in self.tools.values()]


REGISTRY = Registry()


def register(tool: Tool) -> Tool:
    return REGISTRY.add(tool)


def _resolve(target: str) -> Callable[..., BaseModel]:
    """Import "module:function" relative to `barrier_viz.commands`, on first use."""
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(f"..commands.{module_name}", __package__)
    return getattr(module, attr)


def _warnings(sel: Any) -> list[str]:
    """Recovered syntax errors, worded (and de-duplicated) as the CLI's `_report_warnings`
    puts them in its JSON; tests compare both surfaces on an input with warnings."""
    return list(dict.fromkeys(f"{sel.unit.path}:{d.line}:{d.column}: warning: " + " ".join(d.message.split()) for d in sel.ir.warnings))


def unit_tool(
    name: str,
    description: str,
    builder: str,
    input_model: type[UnitInput] = UnitInput,
    *,
    feeds: tuple[str, ...] = (),
    require_function: bool = False,
) -> Tool:
    """A tool for a command that selects one unit and builds a document from the selection.

    Argument fields beyond input/unit/func are passed to the builder as keyword arguments of
    the same name; `warnings` is passed when the builder accepts it, as the CLI does. A builder
    may return `(document, details)` (as `check_document` does, for its exit code); the tool
    returns the document, which is what the CLI prints.
    """

    def run(args: ToolInput) -> BaseModel:
        from ..session import select

        assert isinstance(args, UnitInput)
        sel = select(args.input, args.unit, args.func, require_function=require_function)
        build = _resolve(builder)
        extra = args.model_dump(exclude={"input", "unit", "func"})
        if "warnings" in inspect.signature(build).parameters:
            extra["warnings"] = _warnings(sel)
        built = build(sel, **extra)
        return built[0] if isinstance(built, tuple) else built

    return Tool(name, description, input_model, run, feeds)


def _inputs_runner(args: ToolInput) -> BaseModel:
    return _resolve("inputs_cmd:inputs_document")(args.input)


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's `title` keys: they repeat the property names and cost tokens every turn."""
    if isinstance(schema, dict):
        return {k: _clean_schema(v) for k, v in schema.items() if k != "title" or not isinstance(v, str)}
    if isinstance(schema, list):
        return [_clean_schema(v) for v in schema]
    return schema


# -- the tools ----------------------------------------------------------------------------------
# One line per command. Descriptions speak to the model: what the document holds and which
# report section it feeds.

register(Tool(
    "inputs",
    "List the IR units the input holds (lit splits, dump snapshots, modules) with index, kind, label, "
    "line range, functions and flags; `default: true` marks the unit analysed when no unit is given. "
    "Call first on dumps and multi-module files to pick the unit.",
    ToolInput,
    _inputs_runner,
))
register(unit_tool(
    "ops",
    "Barrier-relevant operations of one unit (barrier allocation/init/expect/wait/arrive, TMA copies, MMAs and "
    "commits, TMEM loads/stores, aref and token ops, loops, warp_specialize) with line, loop depth, operands, "
    "results and key attributes in MLIR syntax (count, bytes, useD, isAsync, pendings, two_ctas, async_task_id, "
    "buffer.id, ...). Narrow with partition and lines. Raw material; prefer the per-section tools when they exist.",
    "ops_cmd:ops_document",
    OpsInput,
))
register(unit_tool(
    "partitions",
    "Report section 1: one entry per partition (default region included) with its role derived from key ops, "
    "key op counts, warps, task ids, partition type and line range.",
    "partitions_cmd:partitions_document",
    feeds=("partitions",),
    require_function=True,
))
register(unit_tool(
    "buffers",
    "Report section 4: buffer.id groups with storage, memory space, slot bytes and copies, packed TMEM members "
    "(owner and buffer.offset siblings), merged barriers, the expect-bytes check, writer and reader partitions.",
    "buffers_cmd:buffers_document",
    feeds=("shared_data",),
    require_function=True,
))
register(unit_tool(
    "barriers",
    "Report section 5: each logical barrier (allocation, slots, init count, mechanism), every SSA alias "
    "(memdesc_index slots, partition captures, block and iter arguments) and every use with its role, slot, "
    "predicate, partition and line.",
    "barriers_cmd:barriers_document",
    feeds=("aliases",),
    require_function=True,
))
register(unit_tool(
    "check",
    "Findings by the mbarrier phase model: deadlocks (only no-producer, parity-cadence or cross-partition cycle, "
    "with a witness schedule), races, constant phases, expect-byte mismatches, each with severity, partitions, "
    "barrier, lines and evidence. These are the verdicts the report's findings rest on.",
    "check_cmd:check_document",
    CheckInput,
    feeds=("findings",),
    require_function=True,
))
register(unit_tool(
    "graph",
    "Report section 2: the barrier dependency graph: partitions as nodes, and one edge per channel between "
    "partitions with its mechanism, barrier, the data handed over, direction (forward / backward) and lines, "
    "plus arrivals and waits that could not be paired.",
    "graph_cmd:graph_document",
    feeds=("graph",),
    require_function=True,
))
register(unit_tool(
    "phases",
    "Report section 3: per barrier, depth, cadence, each wait's slot and phase formula with sampled (slot, parity) "
    "pairs, which side (producer/consumer) it is, and what each arrive site contributes (arrivals, tx bytes).",
    "phases_cmd:phases_document",
    feeds=("phases",),
    require_function=True,
))
register(unit_tool(
    "coverage",
    "Both coverage tables: column-packed TMEM overwrite rows (✓ ordered / ✗ missing back-edge) and operand-D "
    "accumulator init rows (redundant zero stores), clean rows included.",
    "coverage_cmd:coverage_document",
    feeds=("coverage",),
    require_function=True,
))
register(unit_tool(
    "report",
    "Every section at once. With compact: true, a digest with one line per fact (partitions, graph edges, per-barrier "
    "waits and arrives, buffers, aliases, both coverage tables, findings with witnesses): call this first and drill "
    "into one section with its own tool only when the digest is not enough.",
    "digest:report_tool_document",
    ReportInput,
    feeds=("partitions", "graph", "phases", "shared_data", "aliases", "coverage", "findings"),
    require_function=True,
))
register(unit_tool(
    "explore",
    "Bounded exploration of the partitions' barrier programs under many schedules (systematic, starving each "
    "partition, random), with vector clocks: a witness for each deadlock, two unordered accesses (lines, "
    "partitions, TMEM columns) for each race, or clean_within_bounds / bound_reached. Use it to confirm a hang "
    "or to look for races that no arrive/wait count can show (column-packed TMEM).",
    "explore_cmd:explore_document",
    feeds=("findings",),
    require_function=True,
))

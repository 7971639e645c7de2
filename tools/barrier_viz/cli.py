"""The `barrier-viz` command line: one small function per command, logic lives elsewhere.

Exit codes: 0 ok; 1 `check`/`eval` found what they look for; 2 bad usage or bad input (one line
on stderr naming file, line and column); 3 internal error (traceback only with `--debug`); 4
`check` judged nothing that would be an error but could not judge everything (`not judged`, its
reasons in the output: never to be read as clean).

The pieces every command shares (the exit-code contract `_run`, one-line usage errors, the
shared options and output formats, the per-section body) live in `cli_common`; this module
creates the typer app and registers the commands, in the order `--help` lists them.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Optional

import typer

from .cli_common import (AuditFormat, DebugOpt, DiffFormat, Format, FormatOpt, FuncOpt, GraphFormat, InputArg,
                         OpsFormat, ReportFormat, StrictOpt, UnitOpt, _OneLineUsageErrors, _emit, _fail,
                         _install_process_guards, _output_folder, _report_warnings, _run, _section, _version)
from .commands.explain_cmd import explain as explain_command
from .errors import InputError


app = typer.Typer(
    cls=_OneLineUsageErrors,
    name="barrier-viz",
    help="Audit mbarrier synchronization in warp-specialized Triton kernels, from the IR.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def main_callback(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")] = False,
) -> None:
    """Audit mbarrier synchronization in warp-specialized Triton kernels, from the IR."""


@app.command()
def inputs(
    input: InputArg,
    format: FormatOpt = Format.text,
    kernels: Annotated[bool, typer.Option("--kernels", help="List the kernel compiles in $TRITON_CACHE_DIR and $TRITON_DUMP_DIR (INPUT, if given, filters by name) with their config.")] = False,
    debug: DebugOpt = False,
) -> None:
    """List the units INPUT holds: lit splits, dump snapshots, modules, files of a directory,
    a tritonparse trace's compilations and launches.

    Never parses: a 40 MB MLIR_ENABLE_DUMP log is listed from a streaming scan of its headers.
    """

    def body() -> None:
        from .commands.inputs_cmd import inputs_document, kernels_document, render_inputs_text, render_kernels_text

        if kernels:
            kdoc = kernels_document(input)
            if format is Format.json:
                import json

                sys.stdout.write(json.dumps(kdoc, indent=1) + "\n")
            else:
                render_kernels_text(kdoc)
            return
        doc = inputs_document(input)
        if format is Format.json:
            from .schemas import dump

            sys.stdout.write(dump(doc))
        else:
            render_inputs_text(doc)

    _run(debug, body)


@app.command()
def ops(
    input: InputArg,
    unit: UnitOpt = None,
    func: FuncOpt = None,
    all: Annotated[bool, typer.Option("--all", help="List every operation written in the text, not only barrier-relevant ones.")] = False,
    partition: Annotated[Optional[str], typer.Option("--partition", "-p", help="Only the ops of this partition (main: outside every partition).")] = None,
    lines: Annotated[Optional[str], typer.Option("--lines", help="Only the ops starting in this 1-based line range: A-B, A, A- or -B.")] = None,
    format: Annotated[OpsFormat, typer.Option("--format", "-f", help="Output format: text (a table), compact (one line per op), json.")] = OpsFormat.text,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """List barrier-relevant operations (or every operation with --all), each with its line."""

    def body() -> None:
        from .commands.ops_cmd import ops_document, parse_line_range, render_ops_compact, render_ops_text
        from .session import select

        span = parse_line_range(lines, input)
        sel = select(input, unit, func)
        warnings = _report_warnings(sel, strict)
        doc = ops_document(sel, include_all=all, warnings=warnings, partition=partition, lines=span)
        if format is OpsFormat.json:
            from .schemas import dump

            sys.stdout.write(dump(doc))
        elif format is OpsFormat.compact:
            render_ops_compact(doc)
        else:
            render_ops_text(doc)

    _run(debug, body)


@app.command()
def partitions(
    input: InputArg,
    unit: UnitOpt = None,
    func: FuncOpt = None,
    format: FormatOpt = Format.text,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Report section 1: each partition's role from its key ops, key op counts, warps, task ids."""
    _section(input, unit, func, format, strict, debug, "partitions_cmd", "partitions_document", "render_partitions_text")


@app.command()
def buffers(
    input: InputArg,
    unit: UnitOpt = None,
    func: FuncOpt = None,
    format: FormatOpt = Format.text,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Report section 4: buffer.id groups, writers/readers by partition, merged barriers, expect check."""
    _section(input, unit, func, format, strict, debug, "buffers_cmd", "buffers_document", "render_buffers_text")


@app.command()
def agent(
    input: InputArg,
    unit: UnitOpt = None,
    func: FuncOpt = None,
    model: Annotated[Optional[str], typer.Option("--model", help="Claude model id (default: $BARRIER_VIZ_MODEL, else a current Sonnet).")] = None,
    max_turns: Annotated[int, typer.Option("--max-turns", help="Most model turns before the run is declared failed.")] = 24,
    out: Annotated[Optional[str], typer.Option("--out", help="Folder for report.md, insights.log, status.json and transcript.jsonl.")] = None,
    debug: DebugOpt = False,
) -> None:
    """Have Claude compose the five-section report by calling the barrier-viz tools (needs ANTHROPIC_API_KEY).

    Writes report.md, insights.log, status.json and transcript.jsonl into --out
    (default ./barrier-viz-agent); exits 3 when the run fails.
    """

    def body() -> int:
        from .agent.loop import AgentSetupError
        from .commands.agent_cmd import run_agent_command

        try:
            code, summary = run_agent_command(input, unit=unit, func=func, model=model, max_turns=max_turns, out=out)
        except AgentSetupError as exc:
            _fail(str(exc), 2)
        typer.echo(summary)
        return code

    _run(debug, body)


skill_app = typer.Typer(help="Install the barrier-visualization skill for Claude Code.", no_args_is_help=True)
app.add_typer(skill_app, name="skill")


@skill_app.command("install")
def skill_install(
    dest: Annotated[Optional[str], typer.Option("--dest", help="Skills folder to install into (default ./.claude/skills, or ~/.claude/skills with --user); must lie inside the current directory (your home with --user).")] = None,
    user: Annotated[bool, typer.Option("--user", help="Install for your user (~/.claude/skills) instead of this project.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing install of the skill.")] = False,
    name: Annotated[Optional[str], typer.Option("--name", help="Install under this skill name (default barrier-visualization, or barrier-viz when another skill already has that name).")] = None,
    debug: DebugOpt = False,
) -> None:
    """Write SKILLS_DIR/barrier-visualization/ (SKILL.md, examples, reference files) and list what was written.

    When another skill named barrier-visualization is at the destination or in the project
    (Meta's Triton fork ships one), it is left alone and this one is installed as barrier-viz."""

    def body() -> None:
        from .commands.skill_cmd import install_skill, render_install_text

        typer.echo(render_install_text(install_skill(dest, user=user, force=force, name=name)))

    _run(debug, body)


@app.command()
def barriers(
    input: InputArg,
    unit: UnitOpt = None,
    func: FuncOpt = None,
    format: FormatOpt = Format.text,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Report section 5: each logical barrier, every SSA name for it, and every use with its partition."""
    _section(input, unit, func, format, strict, debug, "barriers_cmd", "barriers_document", "render_barriers_text")


# Your launch, the same in `check` and `explore` (parsed once: check_cmd.launch_options).
ArgsOpt = Annotated[Optional[str], typer.Option("--args", help="Simulate your launch: integer argument values, e.g. K=4096,N_CTX=77.")]
PidOpt = Annotated[Optional[str], typer.Option("--pid", help="Program id of the simulated CTA: X[,Y[,Z]].")]
GridOpt = Annotated[Optional[str], typer.Option("--grid", help="Programs per axis of your launch: X[,Y[,Z]].")]


@app.command("check")
def check_cmd(
    input: InputArg,
    unit: UnitOpt = None,
    func: FuncOpt = None,
    format: FormatOpt = Format.text,
    no_simulate: Annotated[bool, typer.Option("--no-simulate", help="Static rules only; do not run the kernel's barrier program.")] = False,
    args: ArgsOpt = None,
    pid: PidOpt = None,
    grid: GridOpt = None,
    load: Annotated[Optional[str], typer.Option("--load", help="Values loads read from an array the kernel never writes "
                                                 "(offsets, sizes): NAME=[v0,v1,...], several separated by ';', e.g. "
                                                 "'offs=[0,0,64,64]'. An index past the end reads the last value.")] = None,
    no_input_points: Annotated[bool, typer.Option("--no-input-points", help="Do not search and simulate boundary launches (empty loops, ragged rings, both sides of runtime conditions).")] = False,
    launch_no: Annotated[Optional[int], typer.Option("--launch", min=0, help="INPUT is a tritonparse trace: simulate its recorded launch N (grid and integer arguments; `inputs TRACE` lists them). --args/--pid/--grid override its values.", show_default=False)] = None,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Findings by the mbarrier phase model: deadlocks (with a witness schedule), races, bad
    phases, expect-byte mismatches, and hangs at boundary launches (named by their input).
    Exit 0 when judged clean, 1 when any finding is an error, 4 when not judged (no error, but a
    hang possibility or a verdict the model could not settle: the reasons are printed)."""

    def body() -> int:
        from .analyses.launch.input_points import LaunchError
        from .commands.check_cmd import check_document, launch_options, render_check_text
        from .session import select

        try:
            launch = launch_options(args, pid, grid, load)
        except LaunchError as exc:
            raise typer.BadParameter(str(exc)) from None
        recorded = None
        if launch_no is not None:
            from .commands.check_cmd import with_recorded_launch

            sel, launch, recorded = with_recorded_launch(input, launch_no, unit, func, launch)
        else:
            sel = select(input, unit, func, require_function=True)
        warnings = _report_warnings(sel, strict)
        doc, result = check_document(sel, warnings=warnings, simulate=not no_simulate, launch=launch,
                                     input_points=not no_input_points)
        doc.recorded_launch = recorded
        _emit(sel, doc, format, render_check_text)
        from .analyses.model.judgement import EXIT_STATUS

        return EXIT_STATUS[doc.summary.verdict]

    _run(debug, body)


@app.command()
def graph(
    input: InputArg,
    unit: UnitOpt = None,
    func: FuncOpt = None,
    format: Annotated[GraphFormat, typer.Option("--format", "-f", help="Output format (text is ascii).")] = GraphFormat.ascii,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Report section 2: the barrier dependency graph (who signals whom, for which data, forward or backward)."""

    def body() -> None:
        from .commands.graph_cmd import graph_document, render_graph
        from .session import select

        sel = select(input, unit, func, require_function=True)
        warnings = _report_warnings(sel, strict)
        doc = graph_document(sel, warnings=warnings)
        if format is GraphFormat.json:
            from .schemas import dump

            sys.stdout.write(dump(doc))
        else:
            fmt = "ascii" if format is GraphFormat.text else format.value
            text = render_graph(doc, fmt)
            if fmt == "ascii":  # a diagram of text lines: wrap at the terminal width like every text output
                from .render.console import print_lines

                print_lines(text.rstrip("\n").split("\n"))
            else:
                sys.stdout.write(text)

    _run(debug, body)


@app.command()
def coverage(
    input: InputArg,
    unit: UnitOpt = None,
    func: FuncOpt = None,
    format: FormatOpt = Format.text,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Coverage tables: column-packed TMEM overwrites (one row per aliased range: ✓ ordered /
    ✗ MISSING / ⇠ back-edge required) and operand-D accumulator init (redundant zero stores).
    Always prints both tables, clean rows included."""
    _section(input, unit, func, format, strict, debug, "coverage_cmd", "coverage_document", "render_coverage_text")


@app.command("eval")
def eval_cmd(
    cases: Annotated[Optional[list[str]], typer.Argument(help="Case folders, folders of cases, or a GPU corpus (*/truth.json); default evals/cases.", show_default=False)] = None,
    mode: Annotated[str, typer.Option("--mode", help="deterministic (run check) or agent (score agent outputs).")] = "deterministic",
    agent_out: Annotated[Optional[str], typer.Option("--agent-out", help="Agent mode: folder with one agent output folder per case name.")] = None,
    run_agent: Annotated[bool, typer.Option("--run-agent", help="Agent mode: run the agent for cases whose output folder is missing (needs ANTHROPIC_API_KEY).")] = False,
    config: Annotated[Optional[str], typer.Option("--config", help="Thresholds file (default evals/config.yaml).")] = None,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="Worker processes (default: up to 4).")] = None,
    format: FormatOpt = Format.text,
    debug: DebugOpt = False,
) -> None:
    """Score findings against eval cases: per-kind recall/precision, deadlock recall, false
    deadlocks on known-good inputs, and every miss; exit 1 when a threshold is missed."""

    def body() -> int:
        import json

        from .commands.eval_cmd import eval_document, render_eval_text

        try:
            doc, ok = eval_document(cases or ["evals/cases"], mode, config=config, agent_out=agent_out,
                                    run_agent=run_agent, jobs=jobs)
        except ValueError as exc:
            _fail(str(exc), 2)
        if format is Format.json:
            sys.stdout.write(json.dumps(doc, indent=1) + "\n")
        else:
            render_eval_text(doc, typer.echo)
        return 0 if ok else 1

    _run(debug, body)


@app.command()
def phases(
    input: InputArg,
    unit: UnitOpt = None,
    func: FuncOpt = None,
    format: FormatOpt = Format.text,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Report section 3: per barrier, depth, cadence, each wait's slot and phase formula with the
    parity it polls at its first uses, and what each arrive site contributes."""
    _section(input, unit, func, format, strict, debug, "phases_cmd", "phases_document", "render_phases_text")


@app.command("report")
def report_cmd(
    input: InputArg,
    unit: UnitOpt = None,
    func: FuncOpt = None,
    format: Annotated[ReportFormat, typer.Option("--format", "-f", help="Output format: md or text (for people; the same Markdown), html (one self-contained page, the graph drawn), json (every section's document), compact (one line per fact, for agents).")] = ReportFormat.md,
    out: Annotated[Optional[str], typer.Option("--out", help="Also write report.md, insights.log and status.json (debug_helper's files) and report.html into this folder.")] = None,
    no_simulate: Annotated[bool, typer.Option("--no-simulate", help="Static rules only; do not run the kernel's barrier program.")] = False,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """The full deterministic report: partition summary, dependency graph, index/phase analysis,
    shared data map, SSA alias map, coverage tables and findings."""

    def body() -> None:
        from pathlib import Path

        from .commands.report_cmd import Report, write_debug_helper_files
        from .session import select

        out_dir = _output_folder(out) if out else None  # a bad --out fails before the analysis
        sel = select(input, unit, func, require_function=True)
        warnings = _report_warnings(sel, strict)
        report = Report(sel, warnings, simulate=not no_simulate)
        if format is ReportFormat.json:
            from .schemas import dump

            sys.stdout.write(dump(report.document()))
        elif format is ReportFormat.compact:
            from .commands.digest import digest_document, digest_text

            sys.stdout.write(digest_text(digest_document(report)))
        elif format is ReportFormat.html:
            sys.stdout.write(report.html())
        else:
            sys.stdout.write(report.markdown())
        if out_dir is not None:
            try:
                status = write_debug_helper_files(report, out_dir)
            except OSError as exc:
                raise InputError(out, f"--out: cannot write there: {exc.strerror or exc}") from None
            typer.echo(f"wrote {status.report_path}, {status.logs_path}, status.json and report.html", err=True)

    _run(debug, body)


@app.command("explore")
def explore_cmd(
    input: InputArg,
    unit: UnitOpt = None,
    func: FuncOpt = None,
    trips: Annotated[Optional[int], typer.Option("--trips", min=1, help="Iterations every loop with barrier operations must reach, at least 1 (default 2: a persistent loop starts a second tile).", show_default=False)] = None,
    max_states: Annotated[int, typer.Option("--max-states", min=1, help="Stop after this many distinct states (at least 1).")] = 200_000,
    timeout: Annotated[float, typer.Option("--timeout", help="Wall-clock backstop in seconds (more than 0): if it stops the exploration before the step budget, the result says \"not judged within time\" (a deadlock or race already seen stands), never clean.")] = 10.0,
    steps: Annotated[Optional[int], typer.Option("--steps", min=1, help="Interpreter steps for the whole exploration, the bound the result rests on, the same on every machine and load (default: 4 x BARRIER_VIZ_SIM_STEPS, i.e. 8,000,000).", show_default=False)] = None,
    args: ArgsOpt = None,
    pid: PidOpt = None,
    grid: GridOpt = None,
    format: FormatOpt = Format.text,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Explore interleavings of the partitions' barrier programs: a witness for each deadlock,
    two unordered accesses for each race, or "clean within bounds". Exit 1 on a finding."""

    def body() -> int:
        from .analyses.launch.input_points import LaunchError
        from .commands.check_cmd import launch_options
        from .commands.explore_cmd import explore_document, render_explore_text
        from .session import select

        try:
            launch = launch_options(args, pid, grid)
        except LaunchError as exc:
            raise typer.BadParameter(str(exc)) from None

        if not timeout > 0 or timeout != timeout:  # NaN too
            _fail(f"explore: --timeout {timeout}: must be more than 0 seconds", 2)

        sel = select(input, unit, func, require_function=True)
        warnings = _report_warnings(sel, strict)
        doc = explore_document(sel, trips=trips, max_states=max_states, timeout=timeout, steps=steps, warnings=warnings, launch=launch)
        _emit(sel, doc, format, render_explore_text)
        return 1 if doc.result in ("deadlock", "race") else 0

    _run(debug, body)


@app.command("audit")
def audit_cmd(
    paths: Annotated[list[str], typer.Argument(help="Files, directories (searched recursively) or - for a list of paths on stdin.", show_default=False)],
    format: Annotated[AuditFormat, typer.Option("--format", "-f", help="text (table), json (barrier-viz/audit/v1), sarif (2.1.0) or junit (XML).")] = AuditFormat.text,
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="Write the output to this file (a summary line goes to stderr).")] = None,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="Worker processes (default: the CPU count).")] = None,
    baseline: Annotated[Optional[str], typer.Option("--baseline", help="Findings already known (from --write-baseline): only new errors fail.")] = None,
    write_baseline: Annotated[Optional[str], typer.Option("--write-baseline", help="Write every finding's fingerprint to this file.")] = None,
    budget: Annotated[int, typer.Option("--budget", help="Interpreter steps per kernel (the same on every machine and load); past it the deadlock run stops (bound_reached) and static findings are kept. 0: no budget.")] = 500_000,
    no_simulate: Annotated[bool, typer.Option("--no-simulate", help="Static rules only; do not run the kernels' barrier programs.")] = False,
    cache_dir: Annotated[Optional[str], typer.Option("--cache-dir", help="Result cache folder (default $XDG_CACHE_HOME/barrier-viz/audit, else ~/.cache/barrier-viz/audit).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the result cache.")] = False,
    summary: Annotated[Optional[str], typer.Option("--summary", help="Also append a Markdown summary (verdict, a row per kernel, the worst findings) to this file, e.g. $GITHUB_STEP_SUMMARY.")] = None,
    debug: DebugOpt = False,
) -> None:
    """Check every unit with warp specialization under PATHS, in parallel: a summary table (or
    JSON, SARIF, JUnit) and a CI exit code: 1 when an error finding is new (not in --baseline)."""

    def body() -> int:
        from .commands import audit_cmd as A

        if jobs is not None and jobs < 1:
            raise typer.BadParameter("--jobs must be at least 1")
        if budget < 0:
            raise typer.BadParameter("--budget must be 0 (none) or more steps")
        bar, factory = A.progress_bar()
        try:
            doc = A.audit_document(paths, jobs=jobs, simulate=not no_simulate, steps=budget or None, cache_dir=cache_dir,
                                   use_cache=not no_cache, baseline=baseline, progress_factory=factory,
                                   read_stdin=lambda: sys.stdin.read() if not sys.stdin.isatty() else "")
        finally:
            if bar is not None:
                bar.stop()
        if write_baseline:
            n = A.save_baseline(doc, write_baseline)
            typer.echo(f"wrote {n} fingerprint(s) to {write_baseline}", err=True)
        text = A.render_output(doc, format.value)
        if summary:
            from .render.job_summary import audit_summary

            try:
                with open(summary, "a", encoding="utf-8") as fh:
                    fh.write(audit_summary(A.public(doc)))
            except OSError as exc:
                raise InputError(summary, f"--summary: cannot write: {exc.strerror or exc}") from None
        if output:
            from pathlib import Path

            from .safe_io import write_atomic

            try:
                write_atomic(Path(output).absolute().parent, Path(output).name, text or "")
            except OSError as exc:
                raise InputError(output, f"cannot write: {exc}") from None
            s = doc["summary"]
            typer.echo(f"wrote {output}: {s['kernels']} kernel(s), {s['errors']} error(s) ({s['new_errors']} new)", err=True)
        elif text is not None:
            sys.stdout.write(text)
        else:
            A.render_audit_text(doc, typer.echo)
        return A.exit_code(doc)

    _run(debug, body)


@app.command("diff")
def diff_cmd(
    a: Annotated[str, typer.Argument(help="First IR (file, dump, directory, or - for stdin).", show_default=False)],
    b: Annotated[Optional[str], typer.Argument(help="Second IR (default: A again, with --unit-b).", show_default=False)] = None,
    unit_a: Annotated[Optional[str], typer.Option("--unit-a", help="Unit of A (index, label substring, last-ws).")] = None,
    unit_b: Annotated[Optional[str], typer.Option("--unit-b", help="Unit of B (index, label substring, last-ws).")] = None,
    func: FuncOpt = None,
    format: Annotated[DiffFormat, typer.Option("--format", "-f", help="Output format.")] = DiffFormat.text,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """What changed in the synchronization from A to B, with barriers matched by what they guard
    (not SSA names or lines): edges, wait slot/phase formulas, arrive counts, expect bytes,
    buffer depth and aliasing, findings. Exit 1 when anything changed."""

    def body() -> int:
        from .commands.diff_cmd import diff_document, diff_markdown, diff_text
        from .session import select

        if b is None and unit_b is None:
            raise typer.BadParameter("diff needs B, or --unit-b to compare two units of A")
        if a == "-" and b == "-":
            raise typer.BadParameter("only one of A and B can be - (stdin)")
        sel_a = select(a, unit_a, func, require_function=True)
        sel_b = select(b or a, unit_b, func, require_function=True)
        warnings = _report_warnings(sel_a, strict) + _report_warnings(sel_b, strict)
        doc = diff_document(sel_a, sel_b, warnings=warnings)
        if format is DiffFormat.json:
            from .schemas import dump

            sys.stdout.write(dump(doc))
        elif format is DiffFormat.md:
            sys.stdout.write(diff_markdown(doc))
        else:
            sys.stdout.write(diff_text(doc))
        return 0 if doc.summary.unchanged else 1

    _run(debug, body)


@app.command("mcp")
def mcp_cmd(
    root: Annotated[Optional[list[str]], typer.Option("--root", help="A folder whose IR the tools may read (repeatable; default: the current folder).")] = None,
    debug: DebugOpt = False,
) -> None:
    """Serve the tools (inputs, ops, partitions, ..., report, explore) to an MCP client over stdio.

    The same tools, JSON schemas and documents as the agent registry and `--format json`;
    inputs must lie inside a --root folder; needs the `agent` extra (the `mcp` package)."""

    def body() -> None:
        try:
            import mcp  # noqa: F401
        except ImportError:
            _fail("mcp: the `mcp` package is not installed; pip install 'barrier-viz[agent]'", 2)
        from pathlib import Path

        from .agent.mcp_server import serve_stdio

        roots = root or [os.getcwd()]
        for r in roots:
            if not Path(r).expanduser().is_dir():
                raise InputError(r, "--root: not a folder")
        serve_stdio(roots)

    _run(debug, body)


app.command("explain")(explain_command)


# Commands added by later work go above this line, each a thin function like `ops`:
# select the unit, build the document with a function from `commands/`, emit it.


def main() -> None:
    """Console-script entry point."""
    _install_process_guards()
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

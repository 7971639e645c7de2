"""What every command of the `barrier-viz` command line shares (`cli` registers the commands):

* the error contract: `_run` runs a command body and maps its errors to the exit codes of
  `cli` (one line on stderr, `_fail`); usage errors get the same one line
  (`_OneLineUsageErrors`), and signals and the CPU and memory backstops of `limits` stop the
  console command cleanly (`_install_process_guards`);
* INPUT or `--kernel NAME` on every command that takes INPUT (`_accept_kernel`);
* the shared arguments and options (`InputArg`, `UnitOpt`, `FuncOpt`, `FormatOpt`, ...) and the
  output formats of each command (`Format`, `GraphFormat`, `ReportFormat`, ...);
* the common body of the per-section commands (`_section`, `_emit`), reader warnings
  (`_report_warnings`), `--out` (`_output_folder`) and `--version` (`_version`).
"""

from __future__ import annotations

import os
import sys
import traceback
from enum import Enum
from typing import Annotated, Callable, Optional

import typer

from . import __version__
from .errors import InputError

try:  # typer >= 0.20 vendors click
    from typer._click.exceptions import ClickException, NoArgsIsHelpError
except ImportError:  # pragma: no cover - older typer on real click
    from click.exceptions import ClickException, NoArgsIsHelpError
from typer.core import TyperGroup


class _OneLineUsageErrors(TyperGroup):
    """Usage errors (an unknown option, a missing argument, a bad choice) keep the one-line
    contract of every other error: `barrier-viz: error: COMMAND: what`, exit 2. Typer would print
    a five-line panel that scripts and agents cannot parse. `--help` and a bare command still
    print their help."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for command in self.commands.values():
            _accept_kernel(command)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                              standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:
            exc.show()
            code = exc.exit_code
        except typer.Abort:
            typer.echo("barrier-viz: error: aborted", err=True)
            code = 1
        except ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            names = []  # the subcommand path (`skill install`), whatever the program was called
            while ctx is not None and ctx.parent is not None:
                names.insert(0, ctx.info_name or "")
                ctx = ctx.parent
            where = " ".join(names) or "usage"
            hint = f" (see `barrier-viz {' '.join(names) + ' ' if names else ''}--help`)"
            message = " ".join(exc.format_message().replace("Value error, ", "").split())
            typer.echo(f"barrier-viz: error: {where}: {message}{hint}", err=True)
            code = exc.exit_code if exc.exit_code else 2
        else:
            code = rv if isinstance(rv, int) else 0
        if not standalone_mode:
            return code
        sys.exit(code)


def _kernel_params() -> list:
    """An optional INPUT and `--kernel NAME`, as typer builds them (from a template command)."""
    template_app = typer.Typer()

    @template_app.command()
    def template(
        input: Annotated[Optional[str], typer.Argument(show_default=False)] = None,
        kernel: Annotated[Optional[str], typer.Option("--kernel", metavar="NAME", help=(
            "Analyse the kernel NAME found in $TRITON_CACHE_DIR (default ~/.triton/cache) or "
            "$TRITON_DUMP_DIR instead of INPUT: the newest compile, or NAME@HASH for one of "
            "`inputs --kernels NAME`."))] = None,
    ) -> None:
        """Template."""

    @template_app.command()
    def unused() -> None:
        """A second command, so that typer builds a group."""

    return list(typer.main.get_command(template_app).commands["template"].params)


def _accept_kernel(command) -> None:
    """Every command that takes INPUT also takes `--kernel NAME` (adapters/triton_cache.py):
    INPUT becomes optional, and one of the two is required. Done here once, for every command,
    rather than in each command's signature."""
    index = next((i for i, p in enumerate(command.params) if p.name == "input" and p.param_type_name == "argument"), None)
    if index is None or command.callback is None:
        return
    optional_input, kernel_option = _kernel_params()
    optional_input.help = command.params[index].help
    command.params[index] = optional_input
    command.params.append(kernel_option)
    original = command.callback

    def callback(*args, kernel: str | None = None, **kwargs):
        if kernel is not None and kwargs.get("input") is not None:
            _fail(f"{command.name}: give INPUT or --kernel NAME, not both", 2)
        if kernel is not None:
            kwargs["input"] = _kernel_input(kernel)
        elif kwargs.get("input") is None and not kwargs.get("kernels"):  # `inputs --kernels` lists them all
            _fail(f"{command.name}: Missing argument INPUT (or --kernel NAME) (see `barrier-viz {command.name} --help`)", 2)
        return original(*args, **kwargs)

    command.callback = callback


def _kernel_input(spec: str) -> str:
    """The `.ttgir` path of `--kernel NAME[@HASH]`; a note on stderr says which entry was taken
    when there are several (autotune configs)."""
    from .adapters.triton_cache import resolve

    try:
        entry, others = resolve(spec)
    except InputError as exc:
        _fail(str(exc), 2)
    if others and "@" not in spec:
        typer.echo(f"barrier-viz: --kernel {spec}: the newest of {len(others) + 1} entries, {entry.describe()}; "
                   f"`barrier-viz inputs --kernels {entry.name}` lists them, NAME@HASH picks one", err=True)
    return str(entry.ttgir)


class Format(str, Enum):
    text = "text"
    json = "json"


InputArg = Annotated[str, typer.Argument(help="IR file (.ttgir, .mlir, dump .txt, .gz), a tritonparse trace (.ndjson), a dump directory, or - for stdin.", show_default=False)]
UnitOpt = Annotated[Optional[str], typer.Option("--unit", "-u", help="Unit: an index, a label substring (e.g. doCodePartition), or last-ws.")]
FuncOpt = Annotated[Optional[str], typer.Option("--func", help="Function to analyse (name, with or without @).")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Treat recovered syntax errors as fatal (exit 2).")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show Python tracebacks for internal errors.")]


class OpsFormat(str, Enum):
    text = "text"
    json = "json"
    compact = "compact"  # one line per op


class GraphFormat(str, Enum):
    ascii = "ascii"
    text = "text"  # the same as ascii: every command takes `--format text` (README)
    dot = "dot"
    mermaid = "mermaid"
    json = "json"


class ReportFormat(str, Enum):
    md = "md"
    text = "text"  # the same as md: every command takes `--format text` (README)
    json = "json"
    compact = "compact"  # one line per fact, for agents (commands/digest.py)
    html = "html"  # one self-contained page with the graph drawn (render/html_report.py)


class AuditFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    junit = "junit"


class DiffFormat(str, Enum):
    text = "text"
    md = "md"
    json = "json"


def _fail(message: str, code: int) -> None:
    """Print one line on stderr and exit: scripts and agents read exactly one line."""
    typer.echo("barrier-viz: error: " + " ".join(message.split()), err=True)
    raise typer.Exit(code)


class _Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM before the output was complete: exit 128 + the signal's number."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


_output_complete = False  # set once a command's output is written: a late signal keeps its exit code


def _on_signal(signum, frame) -> None:  # noqa: ARG001
    if not _output_complete:
        raise _Interrupted(signum)


def _on_cpu_limit(signum, frame) -> None:  # noqa: ARG001
    from . import limits

    raise limits.LimitExceeded(limits.CPU_SECONDS.message("the command ran out of CPU time"))


def _install_process_guards() -> None:
    """For the console command only (not in-process test runs): SIGINT and SIGTERM stop the
    command (and, through the audit pool's cleanup, its workers) unless its output is already
    complete; the CPU-time and memory backstops of `limits` become OS limits (SIGXCPU, and
    MemoryError past RLIMIT_DATA), each a one-line exit 2."""
    import resource
    import signal

    from . import limits

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    for rlimit, value, sig_handler in ((resource.RLIMIT_CPU, limits.CPU_SECONDS.value, _on_cpu_limit),
                                       (resource.RLIMIT_DATA, limits.MEMORY.value, None)):
        try:
            soft, hard = resource.getrlimit(rlimit)
            if hard == resource.RLIM_INFINITY or value < hard:
                resource.setrlimit(rlimit, (value, hard))
        except (ValueError, OSError):  # a platform or container that refuses: the caps still hold
            continue
        if sig_handler is not None:
            signal.signal(signal.SIGXCPU, sig_handler)


def _run(debug: bool, body: Callable[[], int | None]) -> None:
    """Run a command body, mapping errors to the exit-code contract (architecture §3):
    2 for bad input or usage (one line naming file:line:col), 3 for our own bugs (one line;
    the traceback only with --debug). Output is flushed here so that a closed pipe
    (`barrier-viz ops x | head`) is handled like any other error, not at interpreter exit."""
    from .progress import progress

    global _output_complete
    try:
        with progress():  # a bar on stderr for long runs, only when stderr is a terminal
            code = body()
        sys.stdout.flush()
        _output_complete = True
    except InputError as exc:
        _fail(str(exc), 2)
    except MemoryError:
        from . import limits

        _fail(limits.MEMORY.message("the command ran out of memory"), 2)
    except typer.Exit:
        raise
    except typer.BadParameter as exc:  # a bad option value found by a command body
        _fail(exc.format_message(), 2)
    except BrokenPipeError:
        # The reader went away: stop quietly, and keep Python from complaining on exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(0)
    except KeyboardInterrupt as exc:
        import signal

        signum = getattr(exc, "signum", signal.SIGINT)
        _fail("terminated (SIGTERM)" if signum == signal.SIGTERM else "interrupted", 128 + signum)
    except Exception as exc:  # noqa: BLE001 - the contract: no traceback without --debug
        if debug:
            traceback.print_exc()  # then the same one-line message and exit code 3
        detail = " ".join(str(exc).split())
        if len(detail) > 200:
            detail = detail[:200] + "..."
        hint = "" if debug else " (rerun with --debug for a traceback)"
        _fail(f"internal error: {type(exc).__name__}: {detail}{hint}", 3)
    else:
        if code:
            raise typer.Exit(code)


def _report_warnings(sel, strict: bool) -> list[str]:
    """Print the syntax errors the parser recovered from, one line each with its position, and
    return them for the JSON document. With --strict the first one is fatal (exit 2)."""
    warnings = sel.ir.warnings
    if strict and warnings:
        first = warnings[0]
        raise InputError(sel.unit.path, f"{first.message} (--strict)", first.line, first.column)
    # tree-sitter may report one recovery twice (an ERROR node and a MISSING leaf): print it once.
    lines = list(dict.fromkeys(f"{sel.unit.path}:{d.line}:{d.column}: warning: " + " ".join(d.message.split()) for d in warnings))
    for line in lines[:20]:
        typer.echo(line, err=True)
    if len(lines) > 20:
        typer.echo(f"... and {len(lines) - 20} more warnings", err=True)
    return lines


def _output_folder(out: str):
    """The folder `--out` names, checked before the analysis (a path that is a file is a usage
    error, exit 2) but created only when the files are written (`safe_io`), so an interrupted
    or failed run leaves no empty folder behind."""
    from pathlib import Path

    path = Path(out)
    if path.exists() and not path.is_dir():
        raise InputError(out, "--out: exists and is not a folder")
    return path


def _version(value: bool) -> None:
    if value:
        typer.echo(f"barrier-viz {__version__}")
        raise typer.Exit()


def _emit(sel, doc, format: "Format", render_text) -> None:
    """Print a command's document as JSON or as text."""
    if format is Format.json:
        from .schemas import dump

        sys.stdout.write(dump(doc))
    else:
        render_text(doc)


def _section(input: str, unit: str | None, func: str | None, format: "Format", strict: bool, debug: bool,
             module: str, document: str, render: str) -> None:
    """The common body of a per-section command: select the unit and function, report reader
    warnings, build the document with `commands.<module>.<document>`, print it."""

    def body() -> None:
        from importlib import import_module

        from .session import select

        mod = import_module(f".commands.{module}", __package__)
        sel = select(input, unit, func, require_function=True)
        warnings = _report_warnings(sel, strict)
        _emit(sel, getattr(mod, document)(sel, warnings=warnings), format, getattr(mod, render))

    _run(debug, body)

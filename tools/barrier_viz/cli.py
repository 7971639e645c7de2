"""The `barrier-viz` command line: one small function per command, logic lives elsewhere.

Exit codes: 0 ok; 1 `check`/`eval` found what they look for; 2 bad usage or bad input (one line
on stderr naming file, line and column); 3 internal error (traceback only with `--debug`).
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated, Callable, Optional

import typer

from . import __version__
from .errors import InputError

app = typer.Typer(
    name="barrier-viz",
    help="Audit mbarrier synchronization in warp-specialized Triton kernels, from the IR.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Format(str, Enum):
    text = "text"
    json = "json"


InputArg = Annotated[str, typer.Argument(help="IR file (.ttgir, .mlir, dump .txt, .gz), a dump directory, or - for stdin.", show_default=False)]
UnitOpt = Annotated[Optional[str], typer.Option("--unit", "-u", help="Unit: an index, a label substring (e.g. doCodePartition), or last-ws.")]
FuncOpt = Annotated[Optional[str], typer.Option("--func", help="Function to analyse (name, with or without @).")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Treat recovered syntax errors as fatal (exit 2).")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show Python tracebacks for internal errors.")]


def _fail(message: str, code: int) -> None:
    typer.echo(f"barrier-viz: error: {message}", err=True)
    raise typer.Exit(code)


def _run(debug: bool, body: Callable[[], int | None]) -> None:
    """Run a command body, mapping errors to the exit-code contract."""
    try:
        code = body()
    except InputError as exc:
        _fail(str(exc), 2)
    except typer.Exit:
        raise
    except BrokenPipeError:
        sys.stderr.close()
        raise typer.Exit(0)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except Exception as exc:  # noqa: BLE001 - the contract: no traceback without --debug
        if debug:
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for a traceback)", 3)
    else:
        if code:
            raise typer.Exit(code)


def _report_warnings(sel, strict: bool) -> list[str]:
    lines = [f"{sel.unit.path}:{d.line}:{d.column}: warning: {d.message}" for d in sel.ir.warnings]
    if strict and lines:
        first = sel.ir.warnings[0]
        raise InputError(sel.unit.path, f"{first.message} (--strict)", first.line, first.column)
    for line in lines[:20]:
        typer.echo(line, err=True)
    if len(lines) > 20:
        typer.echo(f"... and {len(lines) - 20} more warnings", err=True)
    return lines


def _version(value: bool) -> None:
    if value:
        typer.echo(f"barrier-viz {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")] = False,
) -> None:
    """Audit mbarrier synchronization in warp-specialized Triton kernels, from the IR."""


@app.command()
def inputs(input: InputArg, format: FormatOpt = Format.text, debug: DebugOpt = False) -> None:
    """List the units INPUT holds: lit splits, dump snapshots, modules, files of a directory.

    Never parses: a 40 MB MLIR_ENABLE_DUMP log is listed from a streaming scan of its headers.
    """

    def body() -> None:
        from .commands.inputs_cmd import inputs_document, render_inputs_text

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
    format: FormatOpt = Format.text,
    strict: StrictOpt = False,
    debug: DebugOpt = False,
) -> None:
    """List barrier-relevant operations (or every operation with --all), each with its line."""

    def body() -> None:
        from .commands.ops_cmd import ops_document, render_ops_text
        from .session import select

        sel = select(input, unit, func)
        warnings = _report_warnings(sel, strict)
        doc = ops_document(sel, include_all=all, warnings=warnings)
        if format is Format.json:
            from .schemas import dump

            sys.stdout.write(dump(doc))
        else:
            render_ops_text(doc)

    _run(debug, body)


def _emit(sel, doc, format: "Format", render_text) -> None:
    """Print a command's document as JSON or as text."""
    if format is Format.json:
        from .schemas import dump

        sys.stdout.write(dump(doc))
    else:
        render_text(doc)


# Commands added by later work go above this line, each a thin function like `ops`:
# select the unit, build the document with a function from `commands/`, emit it.


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()

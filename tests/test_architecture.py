"""The shape of the code: no import circles between files, no room-sized modules, every analysis
package says what it owns (issue 27).

A circle between files means neither can be read, tested or changed without the other; it grew
here one convenient function-local import at a time, so the import graph counts those too, and
`if TYPE_CHECKING:` imports as well (an annotation-only import still ties two files together:
the fix is a protocol or a model module below both). A module over 600 lines must say in its
docstring, in a paragraph starting with the marker below, why it has to be one piece.

The packages of `analyses/` are layered (its `__init__` docstring): a package imports only the
packages before it, so the folder reads bottom-up and a new module's place is decided by what it
needs.
"""

from __future__ import annotations

import ast
from pathlib import Path

TOOLS = Path(__file__).resolve().parent.parent / "tools"
ANALYSES = TOOLS / "barrier_viz" / "analyses"
MAX_LINES = 600
ONE_PIECE = "One piece:"  # starts the docstring paragraph that says why a long module is not split

# analyses/ packages, lowest first: each may import only those before it (and nothing above).
LAYERS = ("model", "program", "symbolic", "sim", "cluster", "launch", "structure", "rules", "verdicts", "diff")


def _modules(root: Path) -> dict[str, Path]:
    """Every module under `root` by dotted name (a package by its own name, not `__init__`)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of `root` it imports, wherever the import statement sits (top level,
    inside a function, under `if TYPE_CHECKING:`). `from pkg import name` is an edge to the
    submodule `pkg.name` when there is one, else to `pkg`; relative imports are resolved against
    the importing module's package."""
    modules = _modules(root)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                           for alias in node.names]
            edges[name].update(t for t in targets if t in modules and t != name)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(), str(path))) or ""


def test_no_import_circle_between_files() -> None:
    found = circles(import_graph(TOOLS))
    assert not found, "import circles (a module below both, a protocol or a registry breaks them):\n" + \
        "\n".join(" <-> ".join(c) for c in found)


def test_analysis_packages_import_only_the_layers_below() -> None:
    """`model < program < symbolic < sim < cluster < launch < structure < rules < verdicts < diff`.
    The interpreter never reaching into the cluster model or a rule is what lets each be read alone."""
    def layer(module: str) -> int | None:
        parts = module.split(".")
        if parts[:2] != ["barrier_viz", "analyses"] or len(parts) < 3:
            return None
        return LAYERS.index(parts[2]) if parts[2] in LAYERS else None

    upward = sorted(f"{a} -> {b}" for a, targets in import_graph(TOOLS).items() for b in targets
                    if (la := layer(a)) is not None and (lb := layer(b)) is not None and lb > la)
    assert not upward, "imports from a lower analyses package into a higher one:\n" + "\n".join(upward)


def test_the_circle_finder_sees_function_local_and_type_checking_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\ndef g(): pass\n")
    (pkg / "d.py").write_text("import pkg.a\n")
    edges = import_graph(tmp_path)
    assert edges["pkg.a"] == {"pkg.sub.b"} and edges["pkg.sub.b"] == {"pkg.c"} and edges["pkg.d"] == {"pkg.a"}
    assert circles(edges) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    (pkg / "c.py").write_text("def g(): pass\n")
    assert circles(import_graph(tmp_path)) == []


def test_no_module_over_600_lines_without_its_reason() -> None:
    long = {str(p.relative_to(TOOLS)): n for p in sorted(TOOLS.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    unexplained = {p: n for p, n in long.items()
                   if not any(par.lstrip().startswith(ONE_PIECE) for par in _docstring(TOOLS / p).split("\n\n"))}
    assert not unexplained, (f"modules over {MAX_LINES} lines: split them by concept, or say why they are one "
                             f"piece in a docstring paragraph starting {ONE_PIECE!r}: {unexplained}")


def test_every_analysis_package_says_what_it_owns() -> None:
    packages = {".".join(p.parent.relative_to(TOOLS).parts): p for p in sorted(ANALYSES.rglob("__init__.py"))}
    assert "barrier_viz.analyses.structure" in packages and "barrier_viz.analyses.launch" in packages
    bare = sorted(name for name, path in packages.items() if not _docstring(path).strip())
    assert not bare, f"packages without an __init__ docstring (what it owns, what it may import): {bare}"

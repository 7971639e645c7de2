"""Compile one kernel of a facebookexperimental/triton source file, at a commit, to TTGIR.

Runs inside an fbtriton virtual environment (the released compiler), on the CPU:

    /tmp/fbt-hist/bin/python evals/gen/history/compile_src.py --git-dir FORK.git --commit C \
        --path third_party/tlx/tutorials/X.py --kernel K --spec SPEC.json --out OUT.ttgir

SPEC.json: {"signature": {arg: type}, "constexprs": {name: value}, "num_warps": 4,
"num_stages": 1, "num_ctas": 1, "ctas_per_cga": [2,1,1] (optional), "target": "cuda:100",
"edits": [...] (optional, see `apply_edits`), "knobs": {"nvidia.use_meta_ws": true} (optional),
"options": {...} (extra compile options, e.g. maxRegAutoWS), "divisible": [arg, ...] (optional:
arguments the launcher would specialize as multiples of 16, i.e. aligned pointers and strides),
"language": "gluon" (optional: a Gluon kernel, compiled from its own AST source), "nested_in":
TEST_FUNCTION (optional: the kernel is defined inside that function of a test file, see
`lift_nested`)}.

The source is read with `git show COMMIT:PATH` (nothing of the fork is kept in this project);
it is written to a fixed scratch path so that the IR's `loc(...)` file names, and hence the
output bytes, do not depend on a temporary directory. Tutorials import torch and ask the
driver for a device at import time: neither exists here, so a stand-in `torch` module and a
stand-in driver answer those calls (the kernels themselves never touch them at compile time).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import subprocess
import sys
import types
from pathlib import Path

SCRATCH = Path("/tmp/barrier-viz-history-src")


class _StubMeta(type):
    def __getattr__(cls, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Anything(f"{cls.__name__}.{name}")


class _StubBase(metaclass=_StubMeta):
    """What a class derived from a stand-in (`torch.autograd.Function`) derives from."""


class _Anything:
    """Stands for torch and the active driver at import time: every attribute, call, index
    and subclassing works and yields another stand-in."""

    def __init__(self, name: str = "stub") -> None:
        self._name = name

    def __getattr__(self, name: str) -> "_Anything":
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Anything(f"{self._name}.{name}")

    def __call__(self, *a, **k):
        # Used as a decorator (`@torch.compile`, `@torch.no_grad()`): hand back the function.
        if len(a) == 1 and not k and callable(a[0]) and not isinstance(a[0], _Anything):
            return a[0]
        return _Anything(f"{self._name}()")

    def __getitem__(self, key):
        return _Anything(f"{self._name}[]")

    def __mro_entries__(self, bases):
        return (_StubBase,)

    def __iter__(self):
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other) -> bool:
        return other is self

    def __lt__(self, other) -> bool:  # capability checks (`>= 9`) answer "no"
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<{self._name}>"


def _install_stubs(target=None) -> None:
    if "torch" not in sys.modules:
        torch = types.ModuleType("torch")
        torch.__path__ = []  # a package, so `import torch.nn.functional` resolves below
        torch.__getattr__ = lambda name: _Anything(f"torch.{name}")  # type: ignore[attr-defined]
        sys.modules["torch"] = torch
        for sub in ("nn", "nn.functional", "cuda", "autograd", "distributed", "testing"):
            mod = types.ModuleType(f"torch.{sub}")
            mod.__getattr__ = (lambda n, _s=sub: _Anything(f"torch.{_s}.{n}"))  # type: ignore[attr-defined]
            sys.modules[f"torch.{sub}"] = mod
    if "pytest" not in sys.modules:  # the older tutorials are test files (`@pytest.mark...`)
        pytest = types.ModuleType("pytest")
        pytest.__getattr__ = lambda name: _Anything(f"pytest.{name}")  # type: ignore[attr-defined]
        sys.modules["pytest"] = pytest
    import triton

    device = _NoDevice()
    device.target = target
    triton.runtime.driver.set_active(device)


class _NoDevice:
    """The active driver on a machine without a GPU: a tutorial's import-time
    `get_active_torch_device()` gets a stand-in, and every device query raises, so the
    compiler takes its offline path (static shared-memory sizes per capability)."""

    target = None  # set to the compile target before the tutorial is imported

    def get_active_torch_device(self):
        return _Anything("device")

    def get_current_target(self):
        return self.target

    def get_current_device(self):
        return 0

    def __getattr__(self, name: str):
        raise RuntimeError(f"no GPU here (driver.{name})")


def apply_edits(text: str, edits: list[dict]) -> str:
    """Edits describe how a pre-fix or post-fix source differs from the one at `commit`, each
    anchored on an exact source line (stripped) that must occur exactly once:
    `{"move": LINE, "after": LINE}` moves a statement (keeping its indentation),
    `{"delete": LINE}`, `{"replace": LINE, "with": TEXT}`,
    `{"insert_after": LINE, "text": TEXT}` (TEXT is indented like LINE).
    Multi-line TEXT keeps its own relative indentation."""
    lines = text.split("\n")

    def find(anchor: str) -> int:
        hits = [i for i, ln in enumerate(lines) if ln.strip() == anchor.strip()]
        if len(hits) != 1:
            raise SystemExit(f"edit anchor occurs {len(hits)} times, need 1: {anchor!r}")
        return hits[0]

    def indented(block: str, like: str) -> list[str]:
        pad = like[: len(like) - len(like.lstrip())]
        return [pad + ln if ln else ln for ln in block.split("\n")]

    for e in edits:
        if "move" in e:
            i = find(e["move"])
            moved = lines.pop(i)
            j = find(e["after"])
            pad = lines[j][: len(lines[j]) - len(lines[j].lstrip())]
            lines.insert(j + 1, pad + moved.strip())
        elif "delete" in e:
            lines.pop(find(e["delete"]))
        elif "replace" in e:
            i = find(e["replace"])
            lines[i:i + 1] = indented(e["with"], lines[i])
        elif "insert_after" in e:
            i = find(e["insert_after"])
            lines[i + 1:i + 1] = indented(e["text"], lines[i])
        else:
            raise SystemExit(f"unknown edit: {e!r}")
    return "\n".join(lines)


def lift_nested(text: str, outer: str, kernel: str) -> str:
    """A unit test defines its kernel inside the test function (which also launches it), and
    the test file's module-level code (parameter tables over torch dtypes) cannot run against
    the stand-in torch. The kernel's own lines, decorator included, are lifted dedented into a
    module of their own that holds the test file's top-level imports and nothing else; the
    kernel may only use those (the fix tests' kernels do)."""
    tree = ast.parse(text)
    outers = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == outer]
    if len(outers) != 1:
        raise SystemExit(f"nested_in: {len(outers)} module-level functions named {outer!r}, need 1")
    inner = [n for n in ast.walk(outers[0]) if isinstance(n, ast.FunctionDef) and n.name == kernel]
    if len(inner) != 1:
        raise SystemExit(f"nested_in: {len(inner)} functions named {kernel!r} inside {outer!r}, need 1")
    src = text.split("\n")
    imports = ["\n".join(src[n.lineno - 1:n.end_lineno]) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    node = inner[0]
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    lines = src[first - 1:node.end_lineno]
    pad = len(lines[0]) - len(lines[0].lstrip())
    body = [ln[pad:] if ln[:pad].strip() == "" else ln for ln in lines]
    return "\n".join(imports) + "\n\n\n" + "\n".join(body) + "\n"


def source_text(git_dir: str, commit: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def compile_kernel(src_file: Path, kernel: str, spec: dict) -> str:
    from triton.backends.compiler import GPUTarget

    arch, cap = spec.get("target", "cuda:100").split(":")
    target = GPUTarget(arch, int(cap), 32)
    _install_stubs(target)
    import triton
    from triton.compiler import ASTSource

    for key, value in (spec.get("knobs") or {}).items():
        obj = triton.knobs
        *parents, leaf = key.split(".")
        for p in parents:
            obj = getattr(obj, p)
        setattr(obj, leaf, value)
    mod_name = "bvhist_" + src_file.stem.replace("-", "_")
    loader = importlib.util.spec_from_file_location(mod_name, src_file)
    module = importlib.util.module_from_spec(loader)
    sys.modules[mod_name] = module
    loader.loader.exec_module(module)
    fn = getattr(module, kernel)
    while not isinstance(fn, triton.runtime.JITFunction):  # autotuner / heuristics wrappers
        fn = fn.fn
    # A constexpr given as {"eval": "EXPR"} is EXPR evaluated in the tutorial's module (its own
    # dot-attribute tables, `tl.float16`): values JSON cannot spell.
    constexprs = {k: eval(v["eval"], vars(module)) if isinstance(v, dict) and "eval" in v else v
                  for k, v in (spec.get("constexprs") or {}).items()}
    signature = dict(spec["signature"])
    signature.update({k: "constexpr" for k in constexprs})
    options = {"num_warps": spec.get("num_warps", 4), "num_stages": spec.get("num_stages", 1),
               "num_ctas": spec.get("num_ctas", 1)}
    if spec.get("ctas_per_cga"):
        options["ctas_per_cga"] = tuple(spec["ctas_per_cga"])
    options.update(spec.get("options") or {})
    attrs = {(fn.arg_names.index(a),): [["tt.divisibility", 16]] for a in spec.get("divisible") or []}
    source_cls = ASTSource
    if spec.get("language") == "gluon":
        from triton.experimental.gluon._runtime import GluonASTSource as source_cls
    k = triton.compile(source_cls(fn, signature, constexprs, attrs), target=target, options=options)
    return k.asm["ttgir"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git-dir", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--spec", required=True, help="JSON file or inline JSON")
    ap.add_argument("--tag", default="src", help="scratch sub-folder (keeps buggy/fixed sources apart)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    spec = json.loads(Path(args.spec).read_text() if Path(args.spec).is_file() else args.spec)
    text = apply_edits(source_text(args.git_dir, args.commit, args.path), spec.get("edits") or [])
    if spec.get("nested_in"):
        text = lift_nested(text, spec["nested_in"], args.kernel)
    src = SCRATCH / args.tag.replace("^", "_parent").replace("/", "_") / Path(args.path).name
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(text)
    ttgir = compile_kernel(src, args.kernel, spec)
    Path(args.out).write_text(ttgir)
    import triton

    print(json.dumps({"out": args.out, "bytes": len(ttgir), "version": triton.__version__,
                      "warp_specialized": "ttg.warp_specialize" in ttgir}))


if __name__ == "__main__":
    main()

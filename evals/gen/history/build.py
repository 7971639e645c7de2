"""Build the `regression.*` eval cases: real bugs from facebookexperimental/triton's history.

    python evals/gen/history/build.py --git-dir /work/.mirror/facebookexperimental+triton/repo \
        --python /tmp/fbt-hist/bin/python [--only NAME ...]

For every case of `cases.yaml` it compiles the buggy and the fixed source with the released
fbtriton in `--python` (`compile_src.py`, on the CPU), and writes
`evals/cases/regression.<name>.buggy/` and `.fixed/` (`input.ttgir.gz` + `expected.yaml`). The
buggy side expects the findings listed under `expect`, each checked against its `anchor` on the
produced IR line; the fixed side expects no error of a verdict family. Nothing of the fork's
source is kept here: only the compiled IR and the commits it came from.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent.parent
CASES = REPO / "evals" / "cases"
PREFIX = "regression."
VERDICT_FAMILIES = ["deadlock.*", "race.*", "expect.*", "phase.*"]


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True).stdout.strip()


def compile_side(python: str, git_dir: str, case: dict, side: dict, out: Path) -> dict:
    spec = dict(case["spec"])
    if side.get("edits"):
        spec["edits"] = side["edits"]
    with tempfile.TemporaryDirectory() as tmp:
        spec_file = Path(tmp) / "spec.json"
        spec_file.write_text(json.dumps(spec))
        env = dict(os.environ, TRITON_CACHE_DIR=str(Path(tmp) / "cache"))
        env.pop("TRITON_USE_META_WS", None)
        res = subprocess.run([python, str(HERE / "compile_src.py"), "--git-dir", git_dir, "--commit", side["commit"],
                              "--path", case["path"], "--kernel", case["kernel"], "--spec", str(spec_file),
                              "--tag", "fork", "--out", str(out)], env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{case['name']}: compile of {side['commit']} failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _delete_ir_lines(name: str, text: str, patterns: list[str]) -> str:
    """`ir_delete`: the buggy IR derived from the released compiler's (fixed) output by removing
    the operations the fix added, for compiler fixes no released version predates. Each pattern
    must match exactly one line."""
    lines = text.split("\n")
    for pat in patterns:
        hits = [i for i, ln in enumerate(lines) if re.search(pat, ln)]
        if len(hits) != 1:
            raise SystemExit(f"{name}: ir_delete pattern {pat!r} matches {len(hits)} lines, need 1")
        del lines[hits[0]]
    return "\n".join(lines)


def _replace_in_ir_lines(name: str, text: str, edits: list[dict]) -> str:
    """`ir_replace`: like `ir_delete`, an operand the fix changed put back: in the one line
    matching `match`, the first `old` becomes `new`."""
    lines = text.split("\n")
    for e in edits:
        hits = [i for i, ln in enumerate(lines) if re.search(e["match"], ln)]
        if len(hits) != 1 or e["old"] not in lines[hits[0]]:
            raise SystemExit(f"{name}: ir_replace {e['match']!r} matches {len(hits)} lines (need 1 holding {e['old']!r})")
        lines[hits[0]] = lines[hits[0]].replace(e["old"], e["new"], 1)
    return "\n".join(lines)


def _checked_expectations(case: dict, text: str) -> list[dict]:
    lines = text.split("\n")
    out = []
    for e in case.get("expect") or []:
        line = int(e["line"])
        if not (0 < line <= len(lines)) or not re.search(e["anchor"], lines[line - 1]):
            raise SystemExit(f"{case['name']}: line {line} of the buggy IR does not match {e['anchor']!r}: "
                             f"{lines[line - 1][:160] if 0 < line <= len(lines) else '(no such line)'}")
        out.append({k: v for k, v in e.items() if k != "anchor"})
    return out


def build(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(REPO / "tools"))
    from barrier_viz.evals.cases import write_case

    manifest = yaml.safe_load((HERE / "cases.yaml").read_text())
    for case in manifest["cases"]:
        if args.only and case["name"] not in args.only:
            continue
        fix_full = _git(args.git_dir, "rev-parse", case["fix"])
        title = case.get("title", "")
        with tempfile.TemporaryDirectory() as tmp:
            for side_name in ("buggy", "fixed"):
                side = case[side_name]
                out = Path(tmp) / f"{side_name}.ttgir"
                info = compile_side(args.python, args.git_dir, case, side, out)
                text = _delete_ir_lines(case["name"], out.read_text(), side.get("ir_delete") or [])
                text = _replace_in_ir_lines(case["name"], text, side.get("ir_replace") or [])
                source = {
                    "compiler": "fbtriton", "version": info["version"], "target": case["spec"].get("target", "cuda:100"),
                    "repository": "facebookexperimental/triton", "fix": fix_full,
                    "commit": _git(args.git_dir, "rev-parse", side["commit"]), "commit_spec": side["commit"],
                    "path": case["path"], "kernel": case["kernel"],
                    "constexprs": case["spec"].get("constexprs", {}), "num_warps": case["spec"].get("num_warps"),
                    "num_stages": case["spec"].get("num_stages"), "side": side_name, "bug": case["bug"],
                    "recipe": "evals/gen/history/build.py (cases.yaml, compile_src.py)",
                }
                if case["spec"].get("ctas_per_cga"):
                    source["ctas_per_cga"] = case["spec"]["ctas_per_cga"]
                if case["spec"].get("nested_in"):
                    source["nested_in"] = case["spec"]["nested_in"]
                if side.get("edits"):
                    source["edits"] = side["edits"]
                for key in ("ir_delete", "ir_replace"):
                    if side.get(key):
                        source[key] = side[key]
                if case["spec"].get("knobs"):
                    source["knobs"] = case["spec"]["knobs"]
                if side_name == "buggy":
                    # `absent` on a buggy side: a fix whose bug the released lowering already prevents
                    findings, absent = _checked_expectations(case, text), list(case.get("absent") or [])
                    notes = f"regression (buggy side of {case['fix']}: {title}). {case['notes']}"
                else:
                    findings, absent = [], list(VERDICT_FAMILIES)
                    notes = (f"regression (fixed side of {case['fix']}: {title}): the fixed source must report no "
                             f"race, deadlock, expect or phase error.")
                folder = CASES / f"{PREFIX}{case['name']}.{side_name}"
                write_case(folder, text, findings=findings, absent=absent, notes=notes, source=source,
                           truth="regression")
                print(f"{folder.name}: {len(text)} bytes, {len(findings)} expected finding(s)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git-dir", required=True, help="bare clone of facebookexperimental/triton (full history)")
    ap.add_argument("--python", required=True, help="interpreter of a venv with fbtriton (3.7.4)")
    ap.add_argument("--only", nargs="*")
    build(ap.parse_args())


if __name__ == "__main__":
    main()

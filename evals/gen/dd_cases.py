"""Data-dependent GPU truth (issue 21), development-machine side: compile, mutants, cases.

    python evals/gen/dd_cases.py compile evals/gen/dd_bases_cpu.json --python /work/venvs/i21a-up36/bin/python
        TTGIR of the kernels of dd_kernels.py (upstream triton 3.6, cuda:90, through PTX)
    python evals/gen/dd_cases.py mutants evals/gen/dd_bases_cpu.json --work WORK
        WORK/<name>/{base,<mutant>}.ttgir, probe.json, mutants.json: the generic operators of
        barrier_viz.evals.mutate plus the data-dependent ones of barrier_viz.evals.mutate_data
    (device) python3 dd_probe.py run WORK $OUT       every file under every schedule of SCHEDULES
    python evals/gen/dd_cases.py cases evals/gen/dd_results.json --work WORK
        evals/cases/gpu-h200.dd-<kernel>.<mutant>/ with `group: data-dependent`: the label over
        all schedules is the worst one seen (hang > fault > wrong > ok), and the notes say which
        schedules did what (e.g. "hangs only under `odd`: an odd number of segments per program").

A case expects what the GPU did (gpu_cases._expect, --handwritten rules): hang -> a hang-kind
error; wrong -> a race.*; fault -> any error; ok -> no deadlock.* (a latent race of an edit that
races by construction still expects its race).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CASES = REPO / "evals" / "cases"
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(HERE))

GROUP = "data-dependent"
# Generic operators and how many of each per kernel (spread over sub-kinds by mutate._spread).
PER_OPERATOR = "2,const_phase=3,flip_parity=4,dup_wait=1,drop_wait=4,init_count=2,expect_bytes=2,early_release=2," \
               "drop_pre_arrive=1,phase_no_flip=2,init_count_less=1,zero_store=0,dup_arrive=2,drop_only_arrival=2"
SEVERITY = ("hang", "fault", "wrong", "ok")

CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
import dd_kernels as dk


def desc(shape):
    layout = gl.NVMMASharedLayout.get_default_for(shape, gl.float16)
    return f"tensordesc<fp16[{shape[0]}, {shape[1]}],{layout!r}>"


bases = {}
for name, probe in dk.PROBES.items():
    ce = probe["constexprs"]
    consts = {"STAGES": ce["STAGES"], "WS_LIST": dk.ws_list_api(), "num_warps": probe["warps"]}
    if probe["kernel"] == "jagged_norm":
        sig = {"x_desc": desc([ce["BR"], ce["D"]]), "offs_ptr": "*i32", "out_ptr": "*fp32", "S": "i32"}
    else:
        sig = {"x_desc": desc([ce["BK"], ce["BM"]]), "dy_desc": desc([ce["BK"], ce["BN"]]),
               "dw_desc": desc([ce["BM"], ce["BN"]]), "sched_ptr": "*i32", "ntiles_ptr": "*i32",
               "goffs_ptr": "*i32", "H": "i32"}
    fn = getattr(dk, probe["kernel"])
    sig.update({k: "constexpr" for k in consts})
    src = GluonASTSource(fn, sig, {(fn.arg_names.index(k),): v for k, v in consts.items()})
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": probe["warps"]})
    bases[name] = {"ttgir": k.asm["ttgir"], "result": "compiled", "config": probe}
    print(name, "compiled", len(k.asm["ttgir"]), file=sys.stderr)
print(json.dumps({"meta": {"triton": triton.__version__, "compiled_on": "cpu", "target": "cuda:90"},
                  "bases": bases}))
'''


def cmd_compile(args: argparse.Namespace) -> None:
    res = subprocess.run([args.python, "-c", CHILD, str(HERE)], capture_output=True, text=True)
    sys.stderr.write(res.stderr[-4000:])
    if res.returncode != 0:
        sys.exit(res.returncode)
    Path(args.out).write_text(res.stdout)


def cmd_mutants(args: argparse.Namespace) -> None:
    from barrier_viz.evals.mutate_data import data_mutants
    from gpu_cases import cmd_mutants as gpu_mutants

    gpu_mutants(argparse.Namespace(bases=args.bases, work=args.work, per_operator=PER_OPERATOR), extra=data_mutants)


def _label(per_schedule: dict[str, str]) -> str:
    """The mutant's label over its launches: the worst observation (a hang under one schedule
    makes the kernel hang-prone whatever the others did)."""
    seen = [v for v in per_schedule.values() if v in SEVERITY]
    return min(seen, key=SEVERITY.index) if seen else "fail"


def _schedule_note(per_schedule: dict[str, list[str]], kernel: str) -> str:
    from dd_schedules import PROBES, SCHEDULES

    parts = []
    for sname, label in sorted(per_schedule.items()):  # label: every observation, in order
        sched = SCHEDULES[kernel][sname]
        if "lens" in sched:
            n = len(sched["lens"])
            shape = f"segment lengths {sched['lens']}"
        else:
            probe = next(p for p in PROBES.values() if p["kernel"] == kernel)
            per_group = (probe["size"]["H"] // probe["constexprs"]["BM"]) * (probe["size"]["N"] // probe["constexprs"]["BN"])
            n = len(sched["sizes"]) * per_group
            shape = f"group sizes {sched['sizes']} ({per_group} tiles each, tile list in {sched['order']} order)"
        counts = [len(range(p, n, sched["nprog"])) for p in range(sched["nprog"])]
        shape += f", {sched['nprog']} programs with {'/'.join(map(str, counts))} segments or tiles each"
        parts.append(f"`{sname}` ({shape}): {', then '.join(label)}")
    labels = {v for vs in per_schedule.values() for v in vs}
    summary = ""
    if "hang" in labels and len(labels) > 1:
        hung = sorted(s for s, vs in per_schedule.items() if "hang" in vs)
        summary = f" Hung only under {', '.join(hung)}."
    return " Launches, one fresh process each: " + "; ".join(parts) + "." + summary


def cmd_cases(args: argparse.Namespace) -> None:
    from barrier_viz.evals.cases import write_case
    from barrier_viz.evals.mutate_data import RACE_BY_CONSTRUCTION as DATA_RACES
    from gpu_cases import _expect

    res = json.loads(Path(args.results).read_text())
    meta = res.get("meta", {})
    work = Path(args.work)
    for old in CASES.glob("gpu-h200.dd-*"):
        shutil.rmtree(old)
    written = 0
    for name, entry in res["kernels"].items():
        d = work / name
        info = json.loads((d / "mutants.json").read_text())
        cfg = entry["config"]
        for fname, first in sorted(entry["launches"].items()):
            # every observation of the file, first run then reruns, per schedule
            per_schedule = {s: [v] for s, v in first.items()}
            for rerun in entry.get("reruns", {}).values():
                for s, v in rerun.get(fname, {}).items():
                    per_schedule.setdefault(s, []).append(v)
            label = _label({f"{s}#{i}": v for s, vs in per_schedule.items() for i, v in enumerate(vs)})
            if label == "fail":
                continue
            stem = Path(fname).stem
            m = info.get(stem)
            findings, absent, why = _expect(label, stem, m, handwritten=True)
            if label == "ok" and m and m["operator"] in DATA_RACES:
                findings, absent = [{"kind": "race.*"}], ["deadlock.*", "hang"]
                why = (" The GPU runs completed correctly, yet the edit races by construction (see the mutation): "
                       "the schedule in which the race shows did not occur in these runs (a latent race), so the "
                       "case still expects a race.")
            elif label == "hang":
                other = {v: sorted(s for s, vs in per_schedule.items() if v in vs) for v in ("fault", "wrong")}
                if other["fault"]:
                    why += (f" Under {', '.join(other['fault'])} a launch faulted instead (the mis-timed wait went "
                            "through and an async copy or MMA touched the buffer early);")
                if other["wrong"]:
                    why += f" under {', '.join(other['wrong'])} a launch completed with wrong values (a race);"
                if other["fault"] or other["wrong"]:
                    why += " the case expects the hang the other launches showed."
            note = (f"observed on H200 ({meta.get('gpu', 'NVIDIA H200')}, triton {meta.get('triton', '?')}): {label}"
                    + (f" (no completion within {meta.get('hang_after_s', '?')} s of launch)" if label == "hang" else "")
                    + "." + _schedule_note(per_schedule, cfg["kernel"]))
            err = entry.get("errors", {}).get(fname) or ""
            if "CUDA error:" in err:  # the error line a faulting launch printed (reruns read it)
                note += " " + err[err.index("CUDA error:"):].rstrip(".") + "."
            note += why
            if m:
                note += f" Mutation {m['operator']}: {m['why']}"
            source = {"compiler": "gluon", "version": meta.get("triton", "?"), "target": "cuda:90",
                      "kernel": cfg["kernel"], "constexprs": cfg["constexprs"], "num_warps": cfg["warps"],
                      "gpu": meta.get("gpu", "NVIDIA H200"), "recipe": "evals/gen/dd_cases.py",
                      "launches": per_schedule}
            if m:
                source["mutation"] = m["mutation"]
            write_case(CASES / f"gpu-h200.{name}.{stem}", (d / fname).read_text(), findings=findings, absent=absent,
                       notes=note, source=source, truth=label, compress=True, group=GROUP)
            written += 1
    print(f"wrote {written} data-dependent GPU cases")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile")
    c.add_argument("out")
    c.add_argument("--python", default=sys.executable, help="an interpreter with upstream triton 3.6")
    c.set_defaults(func=cmd_compile)
    m = sub.add_parser("mutants")
    m.add_argument("bases")
    m.add_argument("--work", default="/tmp/dd_work")
    m.set_defaults(func=cmd_mutants)
    k = sub.add_parser("cases")
    k.add_argument("results")
    k.add_argument("--work", default="/tmp/dd_work")
    k.set_defaults(func=cmd_cases)
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()

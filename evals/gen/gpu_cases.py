"""Development-machine side of the GPU probe: mutants in, observed cases out.

    python evals/gen/gpu_cases.py mutants BASES.json [--work evals/gen/gpu_work] [--per-operator 2]
        for each base the device compiled correctly, write WORK/<name>/base.ttgir, the mutants
        barrier_viz's mutation engine derives from it (WORK/<name>/<mutant>.ttgir), probe.json
        (the launch config) and mutants.json (each mutant's operator, site and reasoning)
    python evals/gen/gpu_cases.py cases RESULTS.json [--work evals/gen/gpu_work]
        write evals/cases/gpu-h200.<name>.<mutant>/ for every labelled file, with the GPU's
        label as the truth: hang -> expects a hang-kind error; ok -> no deadlock (plus, for the
        unmodified base, no race); wrong -> completed, so no deadlock. `notes` says
        "observed on H200" and keeps the mutation's own reasoning next to it; when the GPU
        disagrees with the mutation's prediction, the GPU wins and the note says so.
        With --handwritten (the Gluon family, gluon_probe.py's results): wrong -> a race.* error;
        fault (a CUDA error after launch) -> any error; ok for an edit that races by construction
        -> still a race.* (latent: the run did not take that schedule), and the notes say why.
        With --cluster (the 2-CTA kernels of gluon_cluster_kernels.py): group cluster, and a hang
        expects a deadlock.* naming a CTA.

Between the two, run on the device (see gpu_probe.py):
    python3 evals/gen/gpu_probe.py run evals/gen/gpu_work $OUT
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CASES = REPO / "evals" / "cases"
sys.path.insert(0, str(REPO / "tools"))

PREFIX = "gpu-h200"


def _limits(spec: str) -> int | dict[str, int]:
    """`--per-operator N` (every operator) or `N,op=M,...` (N for the unnamed ones)."""
    from barrier_viz.evals.mutate import OPERATORS

    head, *rest = spec.split(",")
    if not rest:
        return int(head)
    limits = {name: int(head) for name in OPERATORS}
    for item in rest:
        name, _, n = item.partition("=")
        if name not in OPERATORS:
            raise SystemExit(f"gpu_cases.py: unknown operator {name!r}")
        limits[name] = int(n)
    return limits


def cmd_mutants(args: argparse.Namespace, extra=None) -> None:
    """`extra(text)`, when given, adds further mutants of each base (dd_cases.py: the
    data-dependent operators of barrier_viz.evals.mutate_data)."""
    from barrier_viz.evals.mutate import mutants

    data = json.loads(Path(args.bases).read_text())
    work = Path(args.work)
    if work.exists():
        shutil.rmtree(work)
    total = 0
    for name, base in data["bases"].items():
        # A base that computes a wrong result still tells hang from completion; one that did not
        # compile or is not warp-specialized is of no use.
        # ("compiled": TTGIR compiled here by gluon_compile.py; the device observes the base first.)
        if base["result"] not in ("ok", "wrong", "compiled") or "ttg.warp_specialize" not in base["ttgir"]:
            print(f"{name}: skipped (base {base['result']})")
            continue
        d = work / name
        d.mkdir(parents=True)
        (d / "base.ttgir").write_text(base["ttgir"])
        (d / "probe.json").write_text(json.dumps(base["config"]))
        info = {"meta": data.get("meta", {})}
        found = mutants(base["ttgir"], limit_per_operator=_limits(args.per_operator))
        for m in found + (extra(base["ttgir"]) if extra else []):
            (d / f"{m.name}.ttgir").write_text(m.text)
            info[m.name] = {"operator": m.operator, "findings": m.findings, "absent": m.absent, "why": m.why,
                            "mutation": m.describe()}
            total += 1
        (d / "mutants.json").write_text(json.dumps(info, indent=1))
        print(f"{name}: {len(info) - 1} mutants")
    print(f"{total} mutants under {work}")


# What the GPU ran for a CGA-form kernel of gluon_cluster_kernels.py, read from Triton 3.6's PTX
# of these kernels (so the truth is not read as the fork's leader-barrier lowering).
CLUSTER_LOWERING = (" Triton 3.6 (the H200's) lowers this CGA-form module (ttg.num-ctas = 2, 1xi64 barriers) "
                    "CTA-locally: in its PTX every CTA inits, expects (the expect's byte count as written), "
                    "waits on and arrives at its own copy of each barrier (shared::cta addresses, no mapa), "
                    "and its TMA load (no multicast) completes on its own copy; the barrier's CGA layout "
                    "([[0]] or none) does not change the PTX. The CTAs share no barrier.")


# Operators whose edit races by construction: a correct completion only means the run did not
# take the bad schedule (a latent race), so such an ok case still expects the race.
RACE_BY_CONSTRUCTION = frozenset({"drop_wait", "early_release"})


def _expect(label: str, stem: str, m: dict | None, handwritten: bool, cluster: bool = False) -> tuple[list, list, str]:
    """What a case with this GPU label expects, and why (appended to its notes). In a cluster
    kernel a hang must be the interpreter's deadlock, reported in a CTA that hangs (issue 12);
    the CGA kernels here are symmetric (every CTA waits on its own copy of the barrier), so any
    CTA it names is one that hangs."""
    if label == "hang":
        if cluster:
            return [{"kind": "deadlock.*", "cta": "any"}], [], ""
        return [{"kind": "hang"}], [], ""
    if stem == "base":
        return [], ["deadlock.*", "hang", "race.*"], ""
    if not handwritten:
        # completed: whatever else it is, it did not deadlock in this run
        findings = m["findings"] if m and label == "ok" and m["operator"] == "dup_wait" else []
        return findings, ["deadlock.*", "hang"], ""
    if label == "fault":
        return [{"kind": "error"}], [], (" The run ended in a CUDA error after launch (reproduced; 'unspecified launch "
                                         "failure' where the error was read): the kernel is broken, but a trap pins "
                                         "neither a hang nor a race, so any error finding counts and none is judged "
                                         "false.")
    if label == "wrong":
        return [{"kind": "race.*"}], ["deadlock.*", "hang"], (" A completed run with wrong values: some partition "
                                                              "used a slot out of turn, a race.")
    if m and m["operator"] == "dup_wait":
        return m["findings"], ["deadlock.*", "hang"], ""
    if m and m["operator"] in RACE_BY_CONSTRUCTION:
        return [{"kind": "race.*"}], ["deadlock.*", "hang"], (
            " The GPU runs completed correctly, yet the edit races by construction: the schedule in which the "
            "producer's refill overtakes the read did not occur in these runs (a latent race), so the case still "
            "expects a race.")
    return [], ["deadlock.*", "hang"], ""


def cmd_cases(args: argparse.Namespace) -> None:
    from barrier_viz.analyses.model.findings import HANG_KINDS
    from barrier_viz.evals.cases import write_case

    res = json.loads(Path(args.results).read_text())
    meta = res.get("meta", {})
    work = Path(args.work)
    labels = ("hang", "ok", "wrong", "fault") if args.handwritten else ("hang", "ok", "wrong")
    written = 0
    for name, entry in res["kernels"].items():
        d = work / name
        info = json.loads((d / "mutants.json").read_text())
        bases_meta = info.get("meta", {})
        for fname, label in sorted(entry["results"].items()):
            if label not in labels:
                continue  # a file that did not compile or launch tells nothing about synchronization
            stem = Path(fname).stem
            text = (d / fname).read_text()
            m = info.get(stem)
            observed = (f"observed on H200 ({meta.get('gpu', 'NVIDIA H200')}, triton {bases_meta.get('triton', '?')}): "
                        f"{label}" + (f" (no completion within {meta.get('hang_after_s', '?')} s of launch)"
                                      if label == "hang" else ""))
            if label == "fault" and entry.get("errors", {}).get(fname):
                observed += f" ({entry['errors'][fname]})"
            for key in sorted(k for k in entry if k.startswith("reruns_") and k.endswith("_reps")):
                if fname in entry[key]:  # a repeat run (reruns_<N>_reps: N launches per file)
                    observed += f"; again {entry[key][fname]} over {key[len('reruns_'):-len('_reps')]} launches"
            findings, absent, why = _expect(label, stem, m, args.handwritten, args.cluster)
            note = observed + "." + why
            if args.cluster:
                note += CLUSTER_LOWERING
            if m:
                note += f" Mutation {m['operator']}: {m['why']}"
                # (an operator with no expected kind and no hang ruled out leaves the outcome to the GPU)
                open_outcome = not m["findings"] and not {"hang", "deadlock.*"} & set(m["absent"])
                if not open_outcome and label in ("hang", "ok", "wrong"):
                    predicted_hang = any(f["kind"] == "hang" or f["kind"] in HANG_KINDS for f in m["findings"])
                    if predicted_hang != (label == "hang"):
                        note += " [the GPU disagrees with the mutation's prediction; the observation is the truth here]"
            cfg = entry["config"]
            source = {"compiler": "gluon" if args.handwritten else "triton", "version": bases_meta.get("triton", "?"),
                      "target": "cuda:90", "kernel": cfg["kernel"], "constexprs": cfg["constexprs"],
                      "num_warps": cfg["warps"], "gpu": meta.get("gpu", "NVIDIA H200")}
            if "stages" in cfg:
                source["num_stages"] = cfg["stages"]
            if cfg.get("ctas", 1) > 1:
                source["num_ctas"] = cfg["ctas"]
            if args.cluster:
                source["recipe"] = "evals/gen/gpu_cases.py"
            if "size" in cfg:
                source["size"] = cfg["size"]
            if m:
                source["mutation"] = m["mutation"]
            write_case(CASES / f"{PREFIX}.{name}.{stem}", text, findings=findings, absent=absent, notes=note,
                       source=source, truth=label, compress=True, group="cluster" if args.cluster else None)
            written += 1
    print(f"wrote {written} GPU-observed cases")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("mutants")
    a.add_argument("bases")
    a.add_argument("--work", default=str(HERE / "gpu_work"))
    a.add_argument("--per-operator", default="2", help="N, or N,operator=M,... (see _limits)")
    a.set_defaults(func=cmd_mutants)
    c = sub.add_parser("cases")
    c.add_argument("results")
    c.add_argument("--work", default=str(HERE / "gpu_work"))
    c.add_argument("--handwritten", action="store_true",
                   help="hand-written kernels (Gluon): wrong -> race.*, fault -> any error, latent races kept")
    c.add_argument("--cluster", action="store_true",
                   help="cluster kernels (gluon_cluster_kernels.py): group cluster, a hang expects deadlock.* in a CTA")
    c.set_defaults(func=cmd_cases)
    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()

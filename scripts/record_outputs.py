#!/usr/bin/env python3
"""Record what barrier-viz prints on the shared corpus, so a refactor can prove "same bytes out".

    scripts/record_outputs.py --out DIR [--tree PATH] [--corpus DIR] [--jobs N] [--only GLOB]...
    scripts/record_outputs.py --compare DIR_A DIR_B [--common]

Why: a move of code (issue 27) or a speed-up (issue 28) must not change a finding, a word, an
order or an exit code. This script runs the CLI of one checkout (`--tree`, default this one) as
a subprocess on every IR file of the corpus and writes one record per command: the command
line, the exit code, stdout and stderr. Recording the tree before and after and running
`--compare` lists every record that differs, with its first differing line (exit 1 on any).
Standard library only, so it runs any tree's code with that tree's own imports.

What is recorded (record files mirror the corpus paths under DIR, so they are named by the
file's relative path; `--only` globs match that path):

* `<file>/check`, `<file>/report`, `<file>/explore` for every `.ttgir`, `.mlir`, `.txt` and
  `.gz` file (manifest.json and truth.json are data, not IR): `check FILE`,
  `report --format json FILE`, `explore --format json --timeout T FILE`.
* Files of several units: each command analyses ONE unit by default (the last TTGIR unit with
  warp specialization, else the first). So:
  - lit files split by `// -----` (units of kind `split`, small): also `<file>/unit<I>.check`,
    `.report` and `.explore` with `--unit I` for every unit I;
  - dumps (snapshots: about 110 per file, mostly the same kernel pass after pass, the largest
    units of the corpus): not three commands per snapshot (some 2,000 runs of the biggest
    kernels), but `<file>/audit`: `audit --format json --no-cache --jobs 1 FILE`, which judges
    every warp-specialized snapshot in one process (check's rules and simulation, with audit's
    step budget);
  - the unit lists themselves: `<dir>/_inputs`, `inputs --format json DIR` for every folder
    holding IR files (how each file splits into units is behaviour too).
* `_eval/cases`: `eval --format json -j 1 evals/cases`, run in the tree (its own cases and
  config): every case's matched, missed and false findings and the summary, so "the eval
  harness scores the same on every case" is checked by the same `--compare`.
  `_eval/gpu`: the same over the corpus's GPU-observed sets (`gpu/*/truth.json`).

What depends on time, and how it is normalized (nothing else is):

* JSON keys whose value is a duration measured on a clock: `seconds` (explore's total, an eval
  case's, audit's per-unit and `_stats`), `bounds_seconds` (explore: time spent choosing the
  bounds) and `spent_seconds` (a wall-clock budget's use). Their numbers become "<time>".
* `explore --timeout` is a wall-clock cut (default 10 s): under load the same tree explores
  fewer schedules and reaches a different result (measured: a families kernel gave 4 schedules
  and `bound_reached` at 10 s on a loaded machine, 16 schedules and `clean_within_bounds` with no
  cut). That is not a field to normalize but a different computation, so explore is recorded
  with `--timeout` set far above any run (`--explore-timeout`, default 3600 s); a record whose
  explore still stopped on time says `"reason": "timeout"` in its body, and `--compare` shows it.
* `check`, `report`, `audit` and `eval` count their simulation budget in interpreter steps, the
  same on every machine and under any load, so they need no other normalization. The text of
  `check` has no clock in it. Progress bars are never written to a pipe.

Other things that would make two recordings of the same code differ are fixed instead:
PYTHONHASHSEED=0, a minimal environment (no BARRIER_VIZ_* or TRITON_* variables, COLUMNS=120,
TZ=UTC, LC_ALL=C.UTF-8), the working directory (the corpus root, files named by relative path;
the tree's root for `_eval/cases`), and the tree's and corpus's absolute paths, replaced by
<TREE> and <CORPUS> where an output prints them. `DIR/_meta.json` (tree, commit, Python, time
and CPU seconds per record) is not a record and `--compare` skips it.

Progress (records done/total, elapsed, ETA) goes to stderr. SIGTERM or Ctrl-C stops a recording:
the commands running are killed and leave no record (each record is written whole, by rename),
and `--resume` (the same command line plus --resume) records what is missing. The exit status is
0 when every planned record is there, 130 when the recording is incomplete.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = Path(os.environ.get("BARRIER_VIZ_CORPUS", ROOT.parent / "shared" / "corpus"))
IR_SUFFIXES = (".ttgir", ".mlir", ".txt", ".gz")
TIME_KEYS = ("seconds", "bounds_seconds", "spent_seconds")
_TIME_VALUE = re.compile(r'"(%s)": -?[0-9][0-9.eE+-]*' % "|".join(TIME_KEYS))
COMMANDS = {  # record name -> CLI arguments before the input
    "check": ["check"],
    "report": ["report", "--format", "json"],
    "explore": ["explore", "--format", "json"],  # + --timeout (--explore-timeout: no wall-clock cut)
}
META = "_meta.json"
RUNNING: set[subprocess.Popen] = set()  # children now running, killed when the recording is stopped
STOPPING = threading.Event()


@dataclass
class Job:
    """One CLI run and the record it writes."""

    name: str  # record path relative to the output folder
    source: str  # what --only matches: the corpus file (or folder), or _eval/<set>
    argv: list[str]
    cwd: Path
    weight: float  # expected CPU seconds (rough), for ordering and the ETA
    cpu: float = field(default=0.0)


# -- recording --------------------------------------------------------------------------------
def corpus_files(corpus: Path) -> list[str]:
    return sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*")
                  if p.is_file() and p.name.endswith(IR_SUFFIXES))


def normalize(text: str, tree: Path, corpus: Path) -> str:
    """Blank the clock readings (TIME_KEYS) and the checkout-specific absolute paths."""
    text = _TIME_VALUE.sub(lambda m: f'"{m.group(1)}": "<time>"', text)
    for path, tag in ((str(tree), "<TREE>"), (str(corpus), "<CORPUS>")):
        text = text.replace(path, tag)
    return text


def child_env(tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "TMPDIR", "USER")}
    env.update(PYTHONPATH=str(tree / "tools"), PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
               COLUMNS="120", LINES="50", TZ="UTC", LC_ALL="C.UTF-8", LANG="C.UTF-8", NO_COLOR="1")
    return env


def run_cli(python: str, tree: Path, argv: list[str], cwd: Path, timeout: float) -> tuple[int, str, str, float]:
    """Run `python -m barrier_viz ARGV` in `cwd`; (exit code, stdout, stderr, child CPU seconds)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([python, "-m", "barrier_viz", *argv], cwd=cwd, env=child_env(tree),
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        RUNNING.add(proc)
        timer = threading.Timer(timeout, lambda: _kill(proc))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            RUNNING.discard(proc)
        proc.returncode = os.waitstatus_to_exitcode(status)
        code = proc.returncode
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    if code == -9:
        stderr += f"\n[record_outputs: killed after {timeout:g} s]"
    return code, stdout, stderr, usage.ru_utime + usage.ru_stime


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, 9)
    except ProcessLookupError:
        pass


def list_units(python: str, tree: Path, corpus: Path, folders: list[str], timeout: float) -> tuple[dict, list[Job]]:
    """Each file's units ({file: [unit kinds]}), from `inputs --format json FOLDER` (one run per
    folder: it lists every file's units without parsing them); plus the jobs recording them."""
    units: dict[str, list[str]] = {}
    for folder in folders:
        code, stdout, _, _ = run_cli(python, tree, ["inputs", "--format", "json", folder], corpus, timeout)
        if code != 0:
            continue  # recorded as it is by the folder's _inputs job
        for u in json.loads(stdout).get("units", []):
            units.setdefault(u["path"], []).append(u["kind"])
    jobs = [Job(f"{folder}/_inputs", folder, ["inputs", "--format", "json", folder], corpus, 1.0) for folder in folders]
    return units, jobs


def plan(args, python: str) -> list[Job]:
    tree, corpus = args.tree, args.corpus
    files = corpus_files(corpus)
    if args.only:  # list units only where they are needed (a folder's _inputs record matches its own path)
        files = [f for f in files if any(fnmatch.fnmatch(f, g) or fnmatch.fnmatch(str(Path(f).parent), g)
                                         for g in args.only)]
    folders = sorted({str(Path(f).parent) for f in files})
    units, jobs = list_units(python, tree, corpus, folders, args.record_timeout)
    explore = ["--timeout", f"{args.explore_timeout:g}"]
    for f in files:
        size = (corpus / f).stat().st_size * (8 if f.endswith(".gz") else 1)  # gzip: about 8x
        unit_size = size / max(1, len(units.get(f, [])))  # each command reads one unit
        for name, cli in COMMANDS.items():
            extra = explore if name == "explore" else []
            jobs.append(Job(f"{f}/{name}", f, [*cli, *extra, f], corpus, _cost(unit_size)))
        kinds = units.get(f, []) if args.units else []
        if len(kinds) > 1 and set(kinds) == {"split"}:
            for i in range(len(kinds)):
                for name, cli in COMMANDS.items():
                    extra = explore if name == "explore" else []
                    jobs.append(Job(f"{f}/unit{i}.{name}", f, [*cli, *extra, "--unit", str(i), f], corpus,
                                    _cost(unit_size)))
        elif len(kinds) > 1:
            jobs.append(Job(f"{f}/audit", f, ["audit", "--format", "json", "--no-cache", "--jobs", "1", f], corpus,
                            1 + 0.3 * len(kinds)))
    cases = len(list((tree / "evals" / "cases").glob("*/expected.yaml")))
    jobs.append(Job("_eval/cases", "_eval/cases", ["eval", "--format", "json", "-j", "1", "evals/cases"], tree,
                    1 + cases))
    if (corpus / "gpu").is_dir():
        truth = len([p for p in (corpus / "gpu").rglob("*") if p.name.endswith(IR_SUFFIXES)])
        jobs.append(Job("_eval/gpu", "_eval/gpu", ["eval", "--format", "json", "-j", "1", "gpu"], corpus, 1 + 2 * truth))
    if args.only:
        jobs = [j for j in jobs if any(fnmatch.fnmatch(j.source, g) for g in args.only)]
    return sorted(jobs, key=lambda j: -j.weight)  # the longest first: the last minutes stay busy


def _cost(size: float) -> float:
    """Rough CPU seconds of one command on `size` bytes of IR: interpreter start, then ~40 KB/s."""
    return 1.0 + size / 40_000


def record(args) -> int:
    tree, out, corpus = args.tree, args.out, args.corpus
    python = args.python or default_python(tree)
    if not (tree / "tools" / "barrier_viz").is_dir():
        sys.exit(f"--tree {tree}: no tools/barrier_viz there")
    if not corpus.is_dir():
        sys.exit(f"--corpus {corpus}: no such folder")
    probe = run_cli(python, tree, ["--version"], tree, 120)
    if probe[0] != 0:
        sys.exit(f"{python} cannot run {tree}/tools/barrier_viz (give --python): {probe[2].strip()[-300:]}")
    out.mkdir(parents=True, exist_ok=True)
    started, cpu0 = time.time(), _children_cpu()
    jobs = plan(args, python)
    todo = [j for j in jobs if not (args.resume and (out / j.name).is_file())]
    total_weight = sum(j.weight for j in todo) or 1.0
    print(f"recording {len(todo)} of {len(jobs)} records of {tree} into {out} with {args.jobs} jobs", file=sys.stderr)
    meta = {"tree": str(tree), "commit": _commit(tree), "python": python, "corpus": str(corpus),
            "explore_timeout": args.explore_timeout, "only": args.only, "records": len(jobs),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)), "complete": False}
    done_weight, cpu, before = 0.0, {}, {}
    if args.resume and (out / META).is_file():  # the earlier sessions' time and CPU count too
        before = json.loads((out / META).read_text())
        cpu = {k: v for k, v in before.get("cpu_per_record", {}).items() if (out / k).is_file()}

    def one(job: Job) -> Job | None:
        if STOPPING.is_set():
            return None
        code, stdout, stderr, job.cpu = run_cli(python, tree, job.argv, job.cwd, args.record_timeout)
        if STOPPING.is_set():
            return None  # killed by the stop, not by the command: no record
        body = (f"$ barrier-viz {' '.join(job.argv)}\nexit {code}\n--- stdout\n{normalize(stdout, tree, corpus)}"
                f"\n--- stderr\n{normalize(stderr, tree, corpus)}")
        target = out / job.name
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(body, encoding="utf-8")
        tmp.replace(target)
        return job

    previous_handler = signal.signal(signal.SIGTERM, _interrupt)
    pool = ThreadPoolExecutor(max(1, args.jobs))
    n = 0
    try:
        futures = [pool.submit(one, j) for j in todo]
        for n, fut in enumerate(as_completed(futures), 1):
            job = fut.result()
            cpu[job.name] = round(job.cpu, 2)
            done_weight += job.weight
            elapsed = time.time() - started
            eta = elapsed * (total_weight - done_weight) / done_weight
            print(f"[{n}/{len(todo)}] {_clock(elapsed)} elapsed, ETA {_clock(eta)}  {job.name} ({job.cpu:.1f} s CPU)",
                  file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        STOPPING.set()
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in list(RUNNING):
            _kill(proc)
        print(f"stopped after {n} of {len(todo)} records; the same command with --resume goes on", file=sys.stderr)
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
    pool.shutdown()
    meta.update(complete=all((out / j.name).is_file() for j in jobs),
                wall_seconds=round(before.get("wall_seconds", 0) + time.time() - started, 1),
                cpu_seconds=round(before.get("cpu_seconds", 0) + _children_cpu() - cpu0, 1),
                sessions=before.get("sessions", 0) + 1, started=before.get("started", meta["started"]),
                cpu_per_record=dict(sorted(cpu.items())))
    (out / META).write_text(json.dumps(meta, indent=1) + "\n")
    print(f"{n} records written, {len(cpu)} of {len(jobs)} in {out} ({_clock(meta['wall_seconds'])} wall, "
          f"{meta['cpu_seconds']:.0f} CPU-s{'' if meta['complete'] else ', INCOMPLETE'})", file=sys.stderr)
    return 0 if meta["complete"] else 130


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def default_python(tree: Path) -> str:
    """The tree's virtual environment, else this checkout's, else the interpreter running this."""
    for venv in (tree / ".venv", ROOT / ".venv"):
        if (venv / "bin" / "python").exists():
            return str(venv / "bin" / "python")
    return sys.executable


def _commit(tree: Path) -> str | None:
    try:
        return subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m // 60}h{m % 60:02d}m" if m >= 60 else f"{m}m{s:02d}s"


# -- comparing --------------------------------------------------------------------------------
def records(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in folder.rglob("*")
            if p.is_file() and p.name != META and not p.name.endswith(".tmp")}


def first_difference(a: str, b: str) -> tuple[int, str, str]:
    """The first differing line (1-based) and both versions of it ('' past the end)."""
    la, lb = a.split("\n"), b.split("\n")
    for k in range(max(len(la), len(lb))):
        x = la[k] if k < len(la) else "<end of record>"
        y = lb[k] if k < len(lb) else "<end of record>"
        if x != y:
            return k + 1, x, y
    return 0, "", ""


def compare(a: Path, b: Path, common: bool = False) -> int:
    """Print every record missing on one side or differing; exit status 1 on any. `common`:
    only the records both sides hold (a subset recording, one made with --no-units); how many
    were on one side only is still said."""
    for folder in (a, b):
        if not folder.is_dir():
            sys.exit(f"--compare: {folder}: no such folder")
        meta = folder / META
        if not meta.is_file() or not json.loads(meta.read_text()).get("complete"):
            print(f"warning: {folder} is an incomplete recording (no complete {META})")
    ra, rb = records(a), records(b)
    differing, one_sided = 0, len(set(ra) ^ set(rb))
    names = set(ra) & set(rb) if common else set(ra) | set(rb)
    if common and one_sided:
        print(f"{one_sided} record(s) held by one side only, not compared (--common)")
    for name in sorted(names):
        if name not in rb:
            print(f"only in {a}: {name}")
        elif name not in ra:
            print(f"only in {b}: {name}")
        else:
            ta, tb = ra[name].read_text(encoding="utf-8"), rb[name].read_text(encoding="utf-8")
            if ta == tb:
                continue
            line, x, y = first_difference(ta, tb)
            print(f"DIFF {name}: line {line}\n  - {_clip(x)}\n  + {_clip(y)}")
        differing += 1
    print(f"{differing} of {len(names)} records differ")
    return 1 if differing else 0


def _clip(line: str, width: int = 200) -> str:
    return line if len(line) <= width else line[:width] + "..."


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="The module docstring says what is recorded and what is normalized.")
    ap.add_argument("--tree", type=Path, default=ROOT, help="checkout whose code runs (PYTHONPATH=TREE/tools); "
                    "default: this one")
    ap.add_argument("--out", type=Path, help="folder for the records (created)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                    help=f"corpus root (default $BARRIER_VIZ_CORPUS or {DEFAULT_CORPUS})")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="commands run at once (default: cores)")
    ap.add_argument("--only", action="append", metavar="GLOB",
                    help="record only sources matching GLOB: a corpus file (lit/*, real/fb*), a corpus folder (its _inputs), "
                         "or _eval/cases, _eval/gpu; repeatable")
    ap.add_argument("--python", help="interpreter that runs the tree (default: TREE/.venv, this checkout's .venv, "
                    "or the one running this script)")
    ap.add_argument("--explore-timeout", type=float, default=3600.0,
                    help="explore --timeout, in seconds: far above any run, so the wall clock never cuts (default 3600)")
    ap.add_argument("--record-timeout", type=float, default=7200.0,
                    help="kill a command after this many seconds (its record says so; default 7200)")
    ap.add_argument("--resume", action="store_true", help="keep records already in --out (an interrupted recording "
                    "goes on)")
    ap.add_argument("--no-units", dest="units", action="store_false",
                    help="only each command's default unit: no per-split records, no audit of dumps (a quick look)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"),
                    help="list every record that differs (first differing line); exit 1 on any difference")
    ap.add_argument("--common", action="store_true",
                    help="with --compare: only the records both folders hold (e.g. against a --no-units or --only "
                         "recording)")
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare, common=args.common)
    if not args.out:
        ap.error("--out DIR is required (or --compare DIR_A DIR_B)")
    args.tree, args.out, args.corpus = args.tree.resolve(), args.out.resolve(), args.corpus.resolve()
    return record(args)


if __name__ == "__main__":
    sys.exit(main())

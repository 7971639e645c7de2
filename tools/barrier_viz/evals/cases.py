"""Eval cases (architecture §6): `evals/cases/<name>/input.*` plus `expected.yaml`.

expected.yaml keys: `unit` (optional selector), `findings` (list of {kind, and any of barrier /
buffer_id / partition / line}), `absent` (kinds that must not be reported; a trailing `.*`
matches a whole family, e.g. `deadlock.*`), `notes` (why, and where the truth comes from), and
optionally `source` (how the input was made: compiler, version, target, flags, mutation),
`truth` (`hang` / `ok` / `wrong` for GPU-observed cases) and `group` (a family of cases `eval`
also reports on its own, e.g. `cluster`).

An expected `kind` may also be the group `hang`: any error finding whose kind is one of
`findings.HANG_KINDS`. It is used where the truth is "this kernel never finishes" and the
architecture does not pin which hang kind describes the cause (a skipped parity, a merged
transaction phase). Two more forms, for GPU truth that pins a family but not a kind: a family
pattern such as `race.*` (any error finding of that family), and the group `error` (any error
finding at all: a kernel the GPU saw fault, which proves it broken but not how).

An expected finding may name its `severity` (then that severity, not an error, is what matches:
a warning whose text is the point) and `says` (text the finding's message or suggestion must
contain: a suggested fix must state the condition it holds under).

An expected finding of a cluster case may carry `cta`: a CTA rank, or `any`; the finding must
name that CTA (a witness thread or partition called `cta<k>.<partition>`), so a hang is pinned to
the CTA that hangs.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..inputs import IR_SUFFIXES

EXPECTED = "expected.yaml"
TRUTH_JSON = "truth.json"
HANG_GROUP = "hang"
ERROR_GROUP = "error"


@dataclass
class Case:
    """One eval case: where its IR is, what must and must not be found, and why."""

    name: str
    input: Path
    findings: list[dict[str, Any]] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    unit: str | None = None
    func: str | None = None
    notes: str = ""
    source: dict[str, Any] = field(default_factory=dict)
    truth: str | None = None
    group: str | None = None

    @property
    def known_good(self) -> bool:
        """A case that must produce no deadlock and is otherwise sound: no expected hang,
        deadlocks listed absent (unmodified kernels, benign mutants, GPU runs that completed
        correctly). A GPU run that completed with a *wrong* result did not hang that time, but is
        no known-good input: a flagged hang there is scored as a false finding, not counted as a
        false deadlock on good input."""
        expects_hang = any(_is_hang_kind(f["kind"]) for f in self.findings)
        return not expects_hang and self.truth not in ("wrong", "fault") \
            and any(a in ("deadlock.*", "hang") for a in self.absent)

    @property
    def expects_deadlock(self) -> bool:
        return any(_is_hang_kind(f["kind"]) for f in self.findings)


def _is_hang_kind(kind: str) -> bool:
    from ..analyses.model.findings import HANG_KINDS

    return kind in (HANG_GROUP, "deadlock.*") or kind in HANG_KINDS


def find_input(folder: Path) -> Path | None:
    for path in sorted(folder.iterdir()):
        if path.name.startswith("input") and path.name.endswith(IR_SUFFIXES):
            return path
    return None


def load_case(folder: Path) -> Case:
    """Read one case folder; raises ValueError naming the folder when it is malformed."""
    folder = Path(folder)
    spec_path = folder / EXPECTED
    if not spec_path.is_file():
        raise ValueError(f"{folder}: no {EXPECTED}")
    spec = yaml.safe_load(spec_path.read_text(encoding="utf-8")) or {}
    if not isinstance(spec, dict):
        raise ValueError(f"{spec_path}: expected a mapping")
    inp = find_input(folder)
    if inp is None:
        raise ValueError(f"{folder}: no input.* IR file")
    findings = spec.get("findings") or []
    for f in findings:
        if not isinstance(f, dict) or "kind" not in f:
            raise ValueError(f"{spec_path}: every expected finding needs a kind: {f!r}")
        unknown = set(f) - {"kind", "barrier", "buffer_id", "partition", "line", "cta", "severity", "says"}
        if unknown:
            raise ValueError(f"{spec_path}: unknown keys in expected finding: {sorted(unknown)}")
    return Case(name=folder.name, input=inp, findings=findings, absent=list(spec.get("absent") or []),
                unit=spec.get("unit"), func=spec.get("func"), notes=str(spec.get("notes") or ""),
                source=dict(spec.get("source") or {}), truth=spec.get("truth"),
                group=str(spec["group"]) if spec.get("group") else None)


def gpu_corpus_cases(root: Path) -> list[Case]:
    """Cases from a GPU-observed corpus (`<set>/truth.json` + `<set>/<file>.ttgir`): `hang`
    expects a hang-kind error; `ok` expects no deadlock (and, for an unmodified base, no race);
    `wrong`/`fail` are recorded with no expectation beyond being loadable."""
    out: list[Case] = []
    for truth_path in sorted(Path(root).glob("*/" + TRUTH_JSON)):
        data = json.loads(truth_path.read_text())
        for fname, label in sorted(data.get("results", {}).items()):
            path = truth_path.parent / fname
            if not path.is_file():
                continue
            case = Case(name=f"gpu.{truth_path.parent.name}.{Path(fname).stem}", input=path, truth=label,
                        notes=f"observed on {data.get('gpu', 'GPU')}: {label}", source={"truth_json": str(truth_path)})
            if label == "hang":
                case.findings = [{"kind": HANG_GROUP}]
            elif label == "ok":
                case.absent = ["deadlock.*", "hang"]
            out.append(case)
    return out


def discover(paths: list[str | Path]) -> list[Case]:
    """Cases under each path: a case folder, a folder of case folders, or a GPU corpus folder
    (one holding `*/truth.json`)."""
    cases: list[Case] = []
    for p in map(Path, paths):
        if (p / EXPECTED).is_file():
            cases.append(load_case(p))
        elif any(p.glob("*/" + TRUTH_JSON)):
            cases.extend(gpu_corpus_cases(p))
        elif p.is_dir():
            for sub in sorted(p.iterdir()):
                if (sub / EXPECTED).is_file():
                    cases.append(load_case(sub))
        else:
            raise ValueError(f"{p}: not a case folder, a folder of cases, or a GPU corpus")
    return cases


def write_case(folder: Path, text: str, *, findings: list[dict], absent: list[str], notes: str,
               source: dict | None = None, truth: str | None = None, compress: bool = True,
               input_name: str | None = None, group: str | None = None) -> Path:
    """Write `input.ttgir.gz` (or `input.ttgir`) and `expected.yaml` into `folder`. gzip keeps
    a few hundred 20-100 kB kernels within a few MB of repository."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("input*"):
        old.unlink()
    if compress:
        # mtime=0: the same IR always gives the same bytes, so regenerating leaves git clean.
        name = input_name or "input.ttgir.gz"
        with open(folder / name, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            gz.write(text.encode())
    else:
        (folder / "input.ttgir").write_text(text)
    spec: dict[str, Any] = {"findings": findings, "absent": absent, "notes": notes}
    if truth:
        spec["truth"] = truth
    if group:
        spec["group"] = group
    if source:
        spec["source"] = source
    (folder / EXPECTED).write_text(yaml.safe_dump(spec, sort_keys=False, width=110), encoding="utf-8")
    return folder

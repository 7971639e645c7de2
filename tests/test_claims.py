"""Every "redundant" claim is checked by the simulator (issue 23, point 5): `check` deletes the op
a `wait.redundant` names in a copy and re-runs; the claim stands only if nothing changes, else it
names the other wait or is dropped. These tests re-check the claims `check` prints the same way
a user would: delete the line in a copy of the file and run `check` on it.

The kernel engineer's case: in the project's 2-CTA FA backward (TLX tutorial, configs_bwd_2cta[0])
the shape rule said the wait at line 535 on qk_empties "is served by the previous flip". It is
the essential one: it keeps the dQ MMA from overwriting TMEM the softmax partition still reads.
The one that can go is the wait at line 518.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import run_cli
from corpus_units import CORPUS

REPO = Path(__file__).resolve().parent.parent
FA_BWD_2CTA = REPO / "evals/gen/out_cluster/fbtriton.tlx_fa_bwd_2cta_v0.sm100.ttgir"


def _check(path: Path) -> dict:
    r = run_cli("check", str(path), "--format", "json", "--no-input-points")
    assert r.exception is None and "Traceback" not in r.stderr, r.stderr
    return json.loads(r.stdout)


def _verdicts(doc: dict) -> set[tuple[str, tuple[int, ...]]]:
    return {(f["kind"], tuple(f["lines"])) for f in doc["findings"] if f["severity"] != "info"}


def _outcomes(doc: dict) -> list[tuple[str, str]]:
    return [(r["policy"], r["outcome"]) for r in (doc.get("simulation") or {}).get("runs", [])]


def _without(path: Path, line: int, tmp_path: Path) -> Path:
    lines = (path.read_bytes() if path.suffix != ".gz" else __import__("gzip").decompress(path.read_bytes())).split(b"\n")
    assert b"ttng.wait_barrier" in lines[line - 1], (path, line)
    lines[line - 1] = b""
    out = tmp_path / f"{path.name.removesuffix('.gz')}.L{line}.ttgir"
    out.write_bytes(b"\n".join(lines))
    return out


def _recheck(path: Path, tmp_path: Path) -> int:
    """Re-check every wait.redundant claim of `path`: deleting the line it names changes no
    verdict and no schedule's outcome. Returns how many claims were re-checked."""
    doc = _check(path)
    claims = [f for f in doc["findings"] if f["kind"] == "wait.redundant"]
    for f in claims:
        checked = f["evidence"].get("checked", {})
        assert checked.get("result") in ("confirmed", "re-aimed", "not checked"), f
        if checked["result"] == "not checked":
            continue
        line = f["evidence"]["redundant_line"]
        assert f"Drop the wait at line {line}" in f["suggestion"]
        copy = _check(_without(path, line, tmp_path))
        assert _verdicts(copy) == _verdicts(doc), (path, line)
        assert _outcomes(copy) == _outcomes(doc), (path, line)
    return len(claims)


def test_fa_backward_2cta_names_the_wait_that_can_go(tmp_path):
    doc = _check(FA_BWD_2CTA)
    by_lines = {tuple(f["lines"]): f for f in doc["findings"] if f["kind"] == "wait.redundant"}
    qk = by_lines[(518, 535)]
    assert qk["evidence"]["redundant_line"] == 518 and qk["evidence"]["checked"]["needed"] == 535
    assert qk["message"].startswith("The wait at line 518") and "line 535 is needed" in qk["message"]
    assert "keep line 535" in qk["suggestion"]
    same = by_lines[(498, 558)]
    assert same["evidence"]["checked"] == {"result": "confirmed", "deleted": 558}
    assert _recheck(FA_BWD_2CTA, tmp_path) == 2


def test_a_claim_the_simulator_refutes_is_dropped(tmp_path):
    """Two waits on one slot with flipped parities where each orders different accesses: the
    shape rule calls the second redundant; deleting either loses an ordering, so no claim."""
    from barrier_viz.analysis import Analysis
    from barrier_viz.analyses.rules.redundant_wait import redundant_waits
    from barrier_viz.session import select

    path = CORPUS / "families/gluon/attention_kernel__hd128_causal0_float16_N8192.ttgir"
    if not path.is_file():
        pytest.skip("families corpus absent")
    shaped = redundant_waits(Analysis(select(str(path), require_function=True)))
    assert shaped, "the shape rule's claim this test is about"
    doc = _check(path)
    assert not [f for f in doc["findings"] if f["kind"] == "wait.redundant"]


def _corpus_files() -> list[Path]:
    out = []
    for sub in ("families", "real"):
        root = CORPUS / sub
        if root.is_dir():
            out += sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".json")
    return out


@pytest.mark.skipif(not (CORPUS / "families").is_dir(), reason="families corpus absent (BARRIER_VIZ_CORPUS)")
def test_every_claim_on_the_corpora_survives_its_deletion(tmp_path):
    """On the families and real corpora: every wait.redundant claim `check` prints, its op
    deleted in a copy and the copy re-checked, changes nothing. Only files whose static rules
    make such a claim are simulated (the claim checks are bounded by them)."""
    from barrier_viz.analysis import Analysis
    from barrier_viz.analyses.rules.redundant_wait import redundant_waits
    from barrier_viz.errors import InputError
    from barrier_viz.session import select

    with_claims = []
    for path in _corpus_files():
        try:
            sel = select(str(path), require_function=True)
        except InputError:
            continue
        if sel.function is not None and redundant_waits(Analysis(sel)):
            with_claims.append(path)
    assert with_claims, "the corpora have shape claims to check"
    rechecked = sum(_recheck(p, tmp_path) for p in with_claims if p.suffix != ".gz")  # a dump log: its unit is re-checked by check_claims itself
    assert rechecked >= 1


def test_claims_do_not_depend_on_the_users_launch():
    """At a launch that hangs (N_CTX=64, outside the contract) or runs one tile, deleting a wait
    shows nothing: the claim is checked at the launch check chooses itself."""
    for args in ("N_CTX=64", "N_CTX=128"):
        r = run_cli("check", str(FA_BWD_2CTA), "--format", "json", "--no-input-points", "--args", args)
        qk = next(f for f in json.loads(r.stdout)["findings"] if f["kind"] == "wait.redundant" and f["lines"] == [518, 535])
        assert qk["evidence"]["redundant_line"] == 518, args

"""The launch contract (issue 23, point 7): `check` states what it assumes about the launch, tells
the IR's own facts (`tt.divisibility`, `llvm.intr.assume`) from its inferences, refuses a launch
only where the IR says it was compiled for another, and simulates one that breaks an inference
with a note: a hang there "hangs if the contract is broken", never a clean pass nor a plain bug.

The kernel engineer's reason: a kernel whose loops run `N // 64` times drops a partial block, so
it is written for N a multiple of 64 (its host asserts `N % 64 == 0`). The tool keeps its own
launches there. A user who asks about N=32 gets that launch simulated (here the consumer's
peeled first wait then has no producer iteration: a hang), told it is outside the contract.
"""

from __future__ import annotations

from pathlib import Path

from test_input_points import _check, kernel, peeled_consumer, ring_loop
from cli_support import run_cli

FLOOR = "      %nf = arith.divsi %N, %c64 : i32"
HEADER = "%K: i32, %N: i32 {tt.divisibility = 16 : i32}, %flag: i32"
FA_BWD_2CTA = Path(__file__).resolve().parent.parent / "evals/gen/out_cluster/fbtriton.tlx_fa_bwd_2cta_v0.sm100.ttgir"


def _kernel() -> str:
    return kernel(FLOOR, ring_loop("producer", "%c0", "%nf"), peeled_consumer(None, "%nf"), header=HEADER)


def _contract(doc: dict) -> dict[str, str]:
    return {a["statement"]: a["source"] for a in doc["contract"]}


def test_contract_tells_ir_facts_from_inferences(tmp_path):
    code, doc = _check(tmp_path, _kernel())
    assert code == 0, doc["findings"]
    contract = _contract(doc)
    assert contract["N is a multiple of 16"] == "IR fact"
    assert contract["N is a multiple of 64"] == "inferred"
    why = next(a["why"] for a in doc["contract"] if a["statement"] == "N is a multiple of 64")
    assert "N / 64" in why and "line" in why
    # Only tt.divisibility and assume ops are IR facts.
    assert all(a["source"] == "inferred" for a in doc["contract"] if "16" not in a["statement"])


def test_launch_breaking_an_ir_fact_is_refused_with_the_ir_value(tmp_path):
    path = tmp_path / "k.ttgir"
    path.write_text(_kernel())
    r = run_cli("check", str(path), "--args", "N=8")
    assert r.exit_code == 2 and "tt.divisibility = 16" in r.stderr and "64" not in r.stderr, r.stderr


def test_launch_breaking_an_inference_is_simulated_and_said(tmp_path):
    code, doc = _check(tmp_path, _kernel(), "--args", "N=32", "--no-input-points")
    assert code == 4 and doc["summary"]["verdict"] == "not judged"
    assert "hangs if the launch contract is broken" in doc["summary"]["not_judged"][0]
    hangs = [f for f in doc["findings"] if f["kind"].startswith("deadlock.")]
    assert hangs and all(f["severity"] == "warning" and f["message"].startswith("Hangs if the launch contract is broken")
                         for f in hangs)
    assert [a["statement"] for a in hangs[0]["evidence"]["outside_contract"]] == ["N is a multiple of 64"]
    launch = doc["input_points"]["launch"]
    assert launch["outcome"] == "deadlock" and launch["outside_contract"][0]["source"] == "inferred"
    # Inside the contract: judged clean, nothing outside.
    code, doc = _check(tmp_path, _kernel(), "--args", "N=128", "--no-input-points")
    assert code == 0 and "outside_contract" not in doc["input_points"]["launch"]


def test_text_and_digest_state_the_contract(tmp_path):
    path = tmp_path / "k.ttgir"
    path.write_text(_kernel())
    text = run_cli("check", str(path), "--args", "N=32", "--no-input-points").stdout
    assert "launch contract (what the simulated launches assume):" in text
    assert "N is a multiple of 64 (inferred)" in text and "N is a multiple of 16 (IR fact)" in text
    assert "note: outside the launch contract (N is a multiple of 64" in text and "simulated anyway" in text
    digest = run_cli("report", str(path), "--format", "compact").stdout
    assert "N is a multiple of 64 (inferred)" in digest


def test_fa_backward_2cta_contract_and_a_launch_outside_it():
    """The project's TLX 2-CTA FA backward (tutorial config configs_bwd_2cta[0]): its tile count is
    N_CTX // 128, an inference (the IR states no divisibility for N_CTX); N_CTX=64 is simulated,
    and its hang is reported as outside the contract."""
    r = run_cli("check", str(FA_BWD_2CTA), "--format", "json")
    import json

    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and _contract(doc)["N_CTX is a multiple of 128"] == "inferred"
    r = run_cli("check", str(FA_BWD_2CTA), "--format", "json", "--args", "N_CTX=64")
    doc = json.loads(r.stdout)
    assert r.exit_code == 4 and "hangs if the launch contract is broken" in doc["summary"]["not_judged"][0]
    assert not [f for f in doc["findings"] if f["severity"] == "error"]


def test_explore_takes_the_launch_and_names_its_bounds(tmp_path):
    """`explore --args/--pid/--grid` as in `check` (one parser), every bound by argument name."""
    import json

    path = tmp_path / "k.ttgir"
    path.write_text(_kernel())
    r = run_cli("explore", str(path), "--args", "N=128", "--pid", "0", "--grid", "2", "--format", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["result"] == "clean_within_bounds"
    assert doc["bounds"]["arg_values"] == {"N": 128} and doc["bounds"]["grid"] == [2]
    assert "arg_values={'N': 128}" in run_cli("explore", str(path), "--args", "N=128").stdout
    # The same refusal as `check` for a value the IR was not compiled for.
    r = run_cli("explore", str(path), "--args", "N=8")
    assert r.exit_code == 2 and "tt.divisibility = 16" in r.stderr
    r = run_cli("explore", str(path), "--args", "N")
    assert r.exit_code == 2 and "NAME=VALUE" in r.stderr
    # Outside the inferred contract: explored anyway, the hang said as check says it.
    doc = json.loads(run_cli("explore", str(path), "--args", "N=32", "--format", "json").stdout)
    assert doc["bounds"]["outside_contract"] == ["N is a multiple of 64"] and doc["result"] == "not_judged"
    assert all(f["severity"] != "error" for f in doc["findings"])
    assert any(f["message"].startswith("Hangs if the launch contract is broken") for f in doc["findings"])


def test_check_names_its_race_bound_arguments(tmp_path):
    code, doc = _check(tmp_path, _kernel(), "--args", "N=128", "--no-input-points")
    assert doc["simulation"]["races"]["arg_values"]["N"] == 128


def test_a_program_past_its_tile_is_outside_the_contract(tmp_path):
    """A bound `N - (pid + 1) * 128` gives each program a 128-wide tile: `pid_x * 128 < N` is an
    inference (hosts launch cdiv(N, 128) programs); --pid 3 with N=256 breaks it and is said."""
    from test_tile_launches import KERNEL

    code, doc = _check(tmp_path, KERNEL, "--args", "N=256", "--pid", "3", "--no-input-points")
    assert _contract(doc)["pid_x * 128 < N"] == "inferred"
    assert [a["statement"] for a in doc["input_points"]["launch"]["outside_contract"]] == ["pid_x * 128 < N"]
    code, doc = _check(tmp_path, KERNEL, "--args", "N=256", "--pid", "1", "--no-input-points")
    assert "outside_contract" not in doc["input_points"]["launch"]

"""tritonparse traces as an input form (adapters/tritonparse_trace.py), on real traces.

The fixtures (tests/fixtures/traces/README.md) were written by tritonparse itself: a compile-only
trace made on the CPU, and a trace with launches made on the H200, where `chunk_sum` completed
with K=4096 and hung with K=0 (h200_probe.json records what the watchdog saw). A kernel
engineer attaches such a trace to a bug report; `check --launch N` must say the hang of the
launch that hung and nothing for the one that ran.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from cli_support import FIXTURES, run_cli

from barrier_viz.adapters.tritonparse_trace import TraceLaunch, map_launch

TRACES = FIXTURES / "traces"
CPU = TRACES / "cpu_compile.ndjson"
H200 = TRACES / "h200_chunk_sum_launches.ndjson"
H200_GZIP = TRACES / "h200_chunk_sum_gzip.bin.ndjson"


def one_line_error(r) -> str:
    assert r.exit_code == 2 and r.exception is None, (r.exit_code, r.exception, r.stdout)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("barrier-viz: error: ") and "Traceback" not in r.stderr
    return lines[0]


def test_compile_only_trace_lists_one_unit_per_compilation():
    doc = run_cli("inputs", str(CPU), "--format", "json").json()
    comps = [u["compilation"] for u in doc["units"]]
    assert [c["kernel"] for c in comps] == ["chunk_sum", "chunk_sum_lost_ready", "gemm_splitk", "gemm_splitk",
                                            "gemm_persistent_few"]
    assert [c["target"] for c in comps] == ["cuda:90"] * 2 + ["cuda:100"] * 3
    assert all(len(c["hash"]) == 64 and "ttgir" in c["stages"] for c in comps)
    assert [c["config"]["num_stages"] for c in comps[2:4]] == [2, 3]  # the two autotune-like configs
    assert all("warp_specialize" in u["flags"] for u in doc["units"])
    assert doc["launches"] == []  # compile-only: nothing to replay
    text = run_cli("inputs", str(CPU)).stdout
    assert "no launches recorded" in text and "gemm_persistent_few" in text


def test_unit_by_kernel_name_hash_prefix_or_index():
    by_name = run_cli("check", str(CPU), "--unit", "chunk_sum", "--format", "json").json()
    assert by_name["input"]["function"] == "chunk_sum" and by_name["input"]["unit_index"] == 0
    h = run_cli("inputs", str(CPU), "--format", "json").json()["units"][3]["compilation"]["hash"]
    by_hash = run_cli("partitions", str(CPU), "--unit", h[:10], "--format", "json").json()
    assert by_hash["input"]["unit_index"] == 3
    # Two compilations of one kernel: the name alone does not say which; the error lists both.
    line = one_line_error(run_cli("check", str(CPU), "--unit", "gemm_splitk"))
    assert "names 2 units" in line and "2: gemm_splitk" in line and "3: gemm_splitk" in line


def test_recorded_hanging_launch_is_named_and_the_good_launch_is_clean():
    truth = json.loads((TRACES / "h200_probe.json").read_text())
    assert truth["outcomes"] == {"4096": "ok", "0": "hang"}  # what the H200 did
    listing = run_cli("inputs", str(H200), "--format", "json").json()
    assert [(la["index"], la["unit"], la["grid"], la["scalars"]["K"]) for la in listing["launches"]] == \
        [(0, 0, [4], 4096), (1, 0, [4], 0)]

    bad = run_cli("check", str(H200), "--launch", "1", "--format", "json")
    assert bad.exit_code == 1, bad.stderr
    doc = bad.json()
    hangs = [f for f in doc["findings"] if f["severity"] == "error" and f["outcome"] == "hang"]
    assert hangs and hangs[0]["kind"].startswith("deadlock") and hangs[0]["barrier"] == "%ready[0]"
    rl = doc["recorded_launch"]
    assert rl["args"] == {"K": 0} and rl["grid"] == [4] and rl["index"] == 1
    # num_warps is recorded as an argument but is no argument of the compiled function: said, not guessed
    assert any(u.startswith("num_warps=4: not an argument of the compiled function") for u in rl["unmapped"])
    assert doc["input_points"]["launch"]["outcome"] == "deadlock"

    good = run_cli("check", str(H200), "--launch", "0", "--format", "json")
    assert good.exit_code == 0, good.stdout
    gdoc = good.json()
    assert gdoc["summary"]["errors"] == 0 and gdoc["recorded_launch"]["args"] == {"K": 4096}
    assert gdoc["input_points"]["launch"]["outcome"] != "deadlock"
    text = run_cli("check", str(H200), "--launch", "1").stdout
    assert "recorded launch 1 of chunk_sum" in text and "K=0" in text and "deadlock" in text


def test_args_override_a_recorded_launch():
    doc = run_cli("check", str(H200), "--launch", "1", "--args", "K=256", "--format", "json").json()
    assert doc["summary"]["errors"] == 0 and doc["input_points"]["launch"]["args"]["K"] == 256


def test_gzip_trace_as_tritonparse_writes_it():
    assert H200_GZIP.read_bytes()[:2] == b"\x1f\x8b"  # gzip members, named .bin.ndjson by tritonparse
    doc = run_cli("inputs", str(H200_GZIP), "--format", "json").json()
    assert doc["input"]["compressed"] and len(doc["launches"]) == 1
    assert run_cli("check", str(H200_GZIP), "--launch", "0").exit_code == 0


def test_trace_on_stdin_and_gzipped_name(tmp_path: Path):
    r = run_cli("inputs", "-", "--format", "json", input=H200.read_bytes())
    assert len(r.json()["launches"]) == 2
    gz = tmp_path / "trace.ndjson.gz"
    gz.write_bytes(gzip.compress(H200.read_bytes()))
    assert run_cli("check", str(gz), "--launch", "1").exit_code == 1


def test_launch_errors_are_one_line():
    assert "no such launch (the trace records 2, 0..1" in one_line_error(run_cli("check", str(H200), "--launch", "5"))
    assert "records no launch" in one_line_error(run_cli("check", str(CPU), "--launch", "0"))
    ttgir = FIXTURES / "triton_cache"
    path = next(ttgir.rglob("chunk_sum.ttgir"))
    assert "is not a tritonparse trace" in one_line_error(run_cli("check", str(path), "--launch", "0"))
    line = one_line_error(run_cli("check", str(CPU), "--launch", "0", "--unit", "1"))
    assert "records no launch" in line


def test_broken_trace_line_names_its_line(tmp_path: Path):
    lines = H200.read_text().splitlines()
    bad = tmp_path / "cut.ndjson"
    bad.write_text(lines[0] + "\n" + lines[1][:500] + "\n")  # a launch event cut mid-write
    line = one_line_error(run_cli("inputs", str(bad)))
    assert f"{bad}:2:" in line and "invalid JSON" in line


def test_compilation_without_ttgir_is_listed_but_not_analysed(tmp_path: Path):
    event = json.loads(CPU.read_text().splitlines()[2])  # gemm_splitk, trimmed to ttir/ttgir/json
    event["payload"]["file_content"] = {k: v for k, v in event["payload"]["file_content"].items()
                                        if not k.endswith(".ttgir")}
    path = tmp_path / "no_ttgir.ndjson"
    path.write_text(json.dumps(event) + "\n")
    doc = run_cli("inputs", str(path), "--format", "json").json()
    assert doc["units"][0]["compilation"]["no_ttgir"].startswith("the trace has no TTGIR")
    assert "the trace has no TTGIR for this compilation" in one_line_error(run_cli("check", str(path)))


def test_unmappable_values_say_why():
    """Each recorded value is mapped by name onto an integer argument of the IR, or listed with
    the reason it is not simulated; the argument types are the real kernel's."""
    types = {"x_ptr": "!tt.ptr<f32>", "out_ptr": "!tt.ptr<f32>", "K": "i32"}
    launch = TraceLaunch(0, 1, "chunk_sum", "h", (4,), {
        "x_ptr": {"type": "tensor", "shape": [4]},
        "K": {"type": "int", "value": 64},
        "BK": {"type": "int", "value": 128},
        "scale": {"type": "float", "value": 0.5},
        "out_ptr": {"type": "int", "value": 7},
        "mode": {"type": "str", "value": "fast", "length": 4},
    })
    m = map_launch(launch, types)
    assert m.args == {"K": 64} and m.grid == (4,)
    why = dict(u.split(": ", 1) for u in m.unmapped)
    assert why["BK=128"].startswith("not an argument of the compiled function")
    assert "scale=0.5" in why and "out_ptr=7" in why and "mode='fast'" in why
    assert "x_ptr" not in " ".join(m.unmapped)  # memory, not a value of the barrier program
    assert map_launch(launch, {}).args == {}  # no names to match: nothing is guessed


def test_tritonparse_parsed_output_too():
    """`tritonparse parse` output (`*_mapped.ndjson.gz`) keeps the compilation and the launches
    and adds its own events (`ir_analysis`, `launch_diff`), which are counted, not read."""
    parsed = TRACES / "h200_chunk_sum_parsed_mapped.ndjson.gz"
    doc = run_cli("inputs", str(parsed), "--format", "json").json()
    assert len(doc["units"]) == 1 and [la["scalars"]["K"] for la in doc["launches"]] == [4096, 0]
    assert run_cli("check", str(parsed), "--launch", "1").exit_code == 1
    assert run_cli("check", str(parsed), "--launch", "0").exit_code == 0

"""The Python package against the files it reads and the command's behaviour."""

import csv
import json
import math
import tomllib

import pandas as pd
import pytest

import coaplab


def cells(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def assert_frame_is_csv(frame, path):
    """Every column and every value of `frame` is that of the CSV file."""
    rows = cells(path)
    assert list(frame.columns) == rows[0]
    assert len(frame) == len(rows) - 1
    for i, row in enumerate(rows[1:]):
        for column, text in zip(rows[0], row):
            value = frame.iloc[i][column]
            if text == "":
                assert pd.isna(value), (i, column, value)
            elif isinstance(value, str):
                assert value == text, (i, column)
            elif isinstance(value, (bool,)) or text in ("true", "false"):
                assert str(value).lower() == text, (i, column)
            else:
                assert float(value) == float(text), (i, column, value, text)


def test_run_returns_the_flows_and_summary_it_wrote(scenario, tmp_path):
    res = coaplab.run(scenario, out=tmp_path / "out", jobs=2)
    assert (res.total, res.failed) == (8, 0)
    assert res.flows.shape == (8 * 3, len(res.flows.columns))
    assert list(res.flows.columns[:8]) == ["run", "combination", "replication", "seed", "flow", "cc", "workload", "clients"]
    assert_frame_is_csv(res.flows, tmp_path / "out" / "flows.csv")
    assert_frame_is_csv(res.summary, tmp_path / "out" / "summary.csv")
    assert sorted(res.summary["cc"].unique()) == ["cocoa", "default"]
    assert res.manifest["scenario"] == "small"
    assert [r["status"] for r in res.manifest["runs"]] == ["ok"] * 8
    # The same directory a second time is refused, as by the command.
    with pytest.raises(coaplab.CoaplabError, match="already holds results; pass --resume"):
        coaplab.run(scenario, out=tmp_path / "out")
    again = coaplab.run(scenario, out=tmp_path / "out", resume=True)
    assert again.flows.equals(res.flows)


def test_overrides_are_scenario_keys_and_are_recorded(scenario, tmp_path):
    res = coaplab.run(
        scenario,
        out=tmp_path / "o",
        reps=1,
        network__buffer_bytes=2500,
        flows__0__cc=["fasor"],
        set={"flows.0.count": 2},
    )
    assert res.total == 1
    assert list(res.flows["cc"]) == ["fasor", "fasor"]
    assert list(res.flows["buffer_bytes"]) == [2500, 2500]
    assert res.manifest["overrides"] == ["flows.0.count=2", "network.buffer_bytes=2500", 'flows.0.cc=["fasor"]']
    with pytest.raises(coaplab.CoaplabError, match="unknown key 'network.bufer_bytes'"):
        coaplab.run(scenario, out=tmp_path / "bad", network__bufer_bytes=1)
    with pytest.raises(coaplab.CoaplabError, match="'flows' has 1 tables; index 4 is out of range"):
        coaplab.plan(scenario, flows__4__cc="fasor")
    assert coaplab.plan(scenario, network__loss=["none", "high"])["runs"] == 16


def test_a_dict_scenario_runs_as_its_toml_text(scenario, tmp_path):
    as_dict = tomllib.loads(scenario.read_text())
    text = coaplab.to_toml(as_dict)
    assert tomllib.loads(text) == as_dict
    a = coaplab.run(as_dict, out=tmp_path / "a")
    b = coaplab.run(scenario, out=tmp_path / "b")
    assert a.flows.equals(b.flows)
    assert a.summary.equals(b.summary)


def test_python_and_command_line_files_are_identical(scenario, tmp_path):
    """`coaplab.run` is `coaplab run`: the same flows.csv and summary.csv, byte for byte, as the
    shards a Python session writes and `merge` joins."""
    whole = coaplab.run(scenario, out=tmp_path / "whole")
    dirs = []
    for k in (1, 2):
        coaplab.run(scenario, out=tmp_path / f"s{k}", shard=f"{k}/2")
        dirs.append(tmp_path / f"s{k}")
    merged = coaplab.merge(tmp_path / "merged", dirs)
    for name in ("flows.csv", "summary.csv"):
        assert (merged.path / name).read_bytes() == (whole.path / name).read_bytes()
    with pytest.raises(coaplab.CoaplabError, match="run 1: shard 2/2 has not run it"):
        coaplab.merge(tmp_path / "m2", dirs[:1])


def test_trace_gives_the_exact_timers():
    frame = coaplab.trace("default", "0 send\n200 ack\n", timer_max_s=60, max_retransmit=20, ack_random_factor=1)
    assert list(frame.columns) == ["time_s", "event", "exchange", "transmission", "timer_s", "rto_s", "state"]
    transmits = frame[frame["event"] == "transmit"]
    assert list(transmits["timer_s"]) == [2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]
    assert list(transmits["time_s"]) == [0.0, 2.0, 6.0, 14.0, 30.0, 62.0, 122.0, 182.0]
    assert frame.iloc[-1]["event"] == "complete" and frame.iloc[-1]["time_s"] == 200.0
    with pytest.raises(coaplab.CoaplabError, match="timer_max_s"):
        coaplab.trace("default", "0 send\n", timer_max_s=-1)


def test_algorithms_and_parameters():
    names = coaplab.algorithms()["name"].tolist()
    assert names[:3] == ["default", "default-fb1", "default-fb2"] and "fasor" in names
    p = coaplab.parameters("default").set_index("key")
    assert p.loc["max_retransmit", "default"] == "4"
    assert p.loc["max_retransmit", "range"] == "integer in [0, 255]"
    assert p.loc["ack_random_factor", "source"] == "RFC 7252 §4.8"
    with pytest.raises(coaplab.CoaplabError):
        coaplab.parameters("nonesuch")
    assert coaplab.code_version().startswith("coaplab ")


CUT = """name = "cut"
max_sim_time_s = 10
[[flows]]
cc = "default"
exchanges = 1
start_jitter_s = 0
[[flows]]
cc = "default"
exchanges = 2
start_jitter_s = 0
[[flows]]
count = 2
cc = "default"
exchanges = 1000
start_jitter_s = 0
"""


def test_unfinished_flows_are_censored_and_warned_about(tmp_path):
    """Two of four flows cut at 10 s: flows.csv says why and for how long, summary.csv counts
    them and leaves the percentiles they leave unbounded empty, and reading warns."""
    path = tmp_path / "cut.toml"
    path.write_text(CUT)
    with pytest.warns(coaplab.UnfinishedFlowsWarning, match=r"2 unfinished flows in 1 of 1 cells \(0 gave up, 2 cut"):
        res = coaplab.run(path, out=tmp_path / "out")
    assert_frame_is_csv(res.flows, tmp_path / "out" / "flows.csv")
    assert_frame_is_csv(res.summary, tmp_path / "out" / "summary.csv")
    assert list(res.unfinished["flow"]) == [2, 3]
    assert list(res.unfinished["unfinished"]) == ["time_cap", "time_cap"]
    assert list(res.unfinished["elapsed_s"]) == [10.0, 10.0]
    assert (res.unfinished["exchanges"] > 0).all()
    row = res.summary.iloc[0]
    assert (row["n"], row["incomplete"], row["unfinished_gave_up"], row["unfinished_time_cap"]) == (2, 2, 0, 2)
    finished = res.flows[res.flows["completed"]]["fct_s"].tolist()
    # The exact quantiles are the package's too; the unbounded ones are empty in summary.csv.
    assert coaplab.censored_quantile(finished, [10.0, 10.0], 0.25) == (row["fct_p25_s"], True)
    median, exact = coaplab.censored_quantile(finished, [10.0, 10.0], 0.5)
    assert not exact and median == row["fct_p50_at_least_s"]
    for column in ("fct_p50_s", "fct_p75_s", "fct_max_s", "fct_mean_s", "fct_sd_s"):
        assert math.isnan(row[column]), column
    assert res.manifest["results_format"] == 3


def test_censored_quantile_is_the_summary_rule():
    finished = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    q = lambda p: coaplab.censored_quantile(finished, [100.0, 50.0], p)
    assert q(0.5) == (5.5, True)
    assert q(0.75) == (7.75, True)
    assert q(0.9)[1] is False and math.isclose(q(0.9)[0], 55.0)
    assert q(1.0) == (100.0, False)
    assert coaplab.censored_quantile([1.0, 2.0, 3.0], [0.5], 0.75) == (3.0, False)
    assert coaplab.censored_quantile([10.0], [5.0, 20.0], 0.5) == (10.0, False)
    assert coaplab.censored_quantile([1.0, 2.0], [], 0.5) == (1.5, True)

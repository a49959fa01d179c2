"""What a notebook user reaches through coaplab.run: traces, the side files (timers.csv,
intervals.csv, exchanges.csv), the progress bar and Ctrl-C."""

import os
import signal
import threading
import time

import pandas as pd
import pyarrow.parquet as pq
import pytest

import coaplab

# Losses, so that retransmission timers expire (timers.csv has rows).
LOSSY = {
    "name": "lossy",
    "seed": 3,
    "replications": 2,
    "network": {"preset": "nbiot", "loss": "high"},
    "flows": [{"count": 3, "cc": ["default", "cocoa"], "exchanges": 6}],
}

# A 3x3 802.15.4 grid: intervals.csv is written by default on a mesh, exchanges.csv on demand.
MESH = {
    "name": "mesh",
    "seed": 1,
    "replications": 2,
    "topology": {"kind": "mesh", "rows": 3, "cols": 3, "routing": "static"},
    "flows": [{"count": "all", "cc": "cocoa", "exchanges": 3}],
    "output": {"exchanges": True},
}


def per_flow(frame, name):
    return frame.groupby(["run", "flow"]).size().rename(name)


def test_traced_runs_return_their_tables(scenario, tmp_path):
    res = coaplab.run(scenario, out=tmp_path / "o", jobs=2, trace=[0, 5], progress=False)
    assert res.trace_dir == tmp_path / "o" / "trace"
    assert sorted(res.traces) == [0, 5]
    assert len(res.traces) == 2
    with pytest.raises(KeyError, match="run 1 was not traced"):
        res.traces[1]
    for run in (0, 5):
        trace = res.traces[run]
        assert trace.tables() == ["events", "queue"]
        assert trace.tcp is None and trace.frames is None
        # The DataFrame is the Parquet file, row for row.
        on_disk = pq.read_table(trace.path / "events.parquet").to_pandas()
        assert len(trace.events) == len(on_disk) > 0
        assert list(trace.events.columns) == list(on_disk.columns)
        # One transmit row per transmission of flows.csv, per flow.
        sent = trace.events[trace.events["event"] == "transmit"].groupby("flow").size()
        flows = res.flows[res.flows["run"] == run].set_index("flow")["transmissions"]
        assert sent.to_dict() == flows.to_dict()
        assert set(trace.queue["link"]) == {"up", "down"}
        assert trace.pcap("up").stat().st_size > 24 and trace.pcap("down").exists()
    stacked = res.traces.events
    assert list(stacked.columns[:2]) == ["run", "time_ns"]
    assert stacked.groupby("run").size().to_dict() == {r: len(res.traces[r].events) for r in (0, 5)}
    # The same traces through read_results of the directory.
    again = coaplab.read_results(tmp_path / "o")
    assert sorted(again.traces) == [0, 5]
    assert again.traces[5].events.equals(res.traces[5].events)


def test_csv_traces_have_the_parquet_rows(scenario, tmp_path):
    parquet = coaplab.run(scenario, out=tmp_path / "p", trace="first", progress=False)
    csv = coaplab.run(scenario, out=tmp_path / "c", trace="first", trace_format="csv",
                      trace_dir=tmp_path / "ct", progress=False)
    assert csv.trace_dir == tmp_path / "ct"
    assert (tmp_path / "ct" / "run000000" / "events.csv").exists()
    # "first": the first replication of every combination (runs 0, 2, 4, 6).
    assert sorted(parquet.traces) == sorted(csv.traces) == [0, 2, 4, 6]
    for run in parquet.traces:
        a, b = parquet.traces[run].events.copy(), csv.traces[run].events
        # CSV writes an empty string and a null alike (an empty field), read as NaN.
        for column in ("state", "vars", "reason", "event"):
            a[column] = a[column].mask(a[column] == "")
        pd.testing.assert_frame_equal(a, b, check_dtype=False)


def test_the_scenarios_output_trace_is_honoured_and_can_be_turned_off(tmp_path):
    scenario = dict(LOSSY, output={"trace": [1]})
    res = coaplab.run(scenario, out=tmp_path / "o", progress=False)
    assert sorted(res.traces) == [1]
    off = coaplab.run(scenario, out=tmp_path / "off", trace=False, progress=False)
    assert off.trace_dir is None and len(off.traces) == 0
    assert not (tmp_path / "off" / "trace").exists()
    with pytest.raises(coaplab.CoaplabError, match="the plan has 4 runs"):
        coaplab.run(scenario, out=tmp_path / "x", trace=[40], progress=False)


def test_timers_loader(tmp_path):
    res = coaplab.run(LOSSY, out=tmp_path / "o", output__timers=True, progress=False)
    timers = res.timers
    assert list(timers.columns) == ["run", "flow", "time_s", "rto_s", "ordinal"]
    assert len(timers) == len(pd.read_csv(tmp_path / "o" / "timers.csv")) > 0
    # One row per expired timer: flows.csv's expired_rtos, flow by flow.
    expired = res.flows.set_index(["run", "flow"])["expired_rtos"]
    counted = per_flow(timers, "n").reindex(expired.index, fill_value=0)
    assert counted.to_dict() == expired.to_dict()
    # Without [output] timers the file is not there, and the error says how to get it.
    plain = coaplab.run(LOSSY, out=tmp_path / "plain", progress=False)
    with pytest.raises(FileNotFoundError, match="output__timers=True"):
        plain.timers


@pytest.mark.filterwarnings("ignore::coaplab.UnfinishedFlowsWarning")
def test_mesh_loaders(tmp_path):
    res = coaplab.run(MESH, out=tmp_path / "m", progress=False)
    intervals, exchanges = res.intervals, res.exchanges
    assert list(intervals.columns) == ["run", "flow", "interval", "start_s", "bytes", "throughput_bps"]
    assert list(exchanges.columns) == ["run", "flow", "start_s", "end_s", "delay_s", "transmissions", "rto_base_s"]
    assert intervals.equals(pd.read_csv(tmp_path / "m" / "intervals.csv"))
    assert exchanges.equals(pd.read_csv(tmp_path / "m" / "exchanges.csv"))
    # One exchanges row per ended exchange of flows.csv; every run and flow has intervals.
    ended = res.flows.set_index(["run", "flow"])["exchanges"]
    assert per_flow(exchanges, "n").to_dict() == ended.to_dict()
    assert set(per_flow(intervals, "n").index) == set(ended.index)
    assert (intervals["throughput_bps"] == intervals["bytes"] * 8 / 0.05).all()
    # A mesh run's trace: events and the frames on air.
    traced = coaplab.run(MESH, out=tmp_path / "t", trace=0, progress=False)
    assert traced.traces[0].tables() == ["events", "frames"]
    assert len(traced.traces[0].frames) > 0 and traced.traces[0].pcap() is None
    capture = traced.traces[0].mesh_pcap()
    assert capture.read_bytes()[:4] == bytes.fromhex("0a0d0d0a")  # a pcapng section header
    assert res.traces.get(0) is None and coaplab.RunTrace(tmp_path / "nothing", 0).mesh_pcap() is None


def test_an_exception_from_progress_stops_the_sweep_resumably(scenario, tmp_path):
    seen = []

    def progress(done, total, failed):
        seen.append((done, total, failed))
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        coaplab.run(scenario, out=tmp_path / "o", jobs=1, progress=progress)
    assert seen == [(1, 8, 0), (2, 8, 0), (3, 8, 0)]
    part = coaplab.read_results(tmp_path / "o")
    statuses = [r["status"] for r in part.manifest["runs"]]
    # The one worker runs ahead of the thread that reports and stops: the runs it had started
    # when the third run's report stopped the sweep end and are recorded.
    ok = statuses.count("ok")
    assert 3 <= ok < 8 and statuses.count("pending") == 8 - ok
    assert sorted(part.flows["run"].unique()) == list(range(ok))
    done = coaplab.run(scenario, out=tmp_path / "o", resume=True, progress=False)
    fresh = coaplab.run(scenario, out=tmp_path / "fresh", progress=False)
    assert [r["status"] for r in done.manifest["runs"]] == ["ok"] * 8
    assert (tmp_path / "o" / "flows.csv").read_bytes() == (tmp_path / "fresh" / "flows.csv").read_bytes()
    assert done.flows.equals(fresh.flows)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals need the main thread")
def test_sigint_stops_a_sweep_between_runs(tmp_path):
    # 2000 runs, seconds even in release; SIGINT from another thread after 0.5 s, while the main
    # thread is in Rust with the GIL released: only Python::check_signals sees it there.
    big = dict(LOSSY, replications=1000)
    # Python's Ctrl-C handler, as at a terminal: a suite started in a shell's background
    # inherits SIGINT ignored, and Python then installs no handler (seen in a fresh chroot).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            coaplab.run(big, out=tmp_path / "o", jobs=2, progress=False)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - t0 < 10
    part = coaplab.read_results(tmp_path / "o")
    statuses = [r["status"] for r in part.manifest["runs"]]
    assert 0 < statuses.count("ok") < 2000
    assert part.flows["run"].nunique() == statuses.count("ok")


def test_the_progress_bar_without_a_terminal(scenario, tmp_path, capfd):
    res = coaplab.run(scenario, out=tmp_path / "o", progress=True)
    err = capfd.readouterr().err
    assert res.total == 8
    assert "8/8" in err and "coaplab" in err
    # Resumed with nothing left: no run, no bar, no error.
    coaplab.run(scenario, out=tmp_path / "o", resume=True)
    calls = []
    coaplab.run(scenario, out=tmp_path / "c", progress=lambda *a: calls.append(a))
    assert len(calls) == 8 and calls[-1] == (8, 8, 0)
    assert [c[0] for c in sorted(calls)] == list(range(1, 9))

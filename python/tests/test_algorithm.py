"""Algorithms written in Python (docs/suite.md, "Algorithms written in Python"): the Python
rewrite of Default CoAP runs byte for byte as the built-in one, the RFC 6298 example is ranked
on the smoke suite, bad classes are refused by name, and the command hands over to Python."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

import coaplab

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "python-algorithm"
SMOKE = ROOT / "suites" / "smoke.toml"


def renamed(path, name, to):
    """The file's bytes with the cc column's ``name`` written ``to``."""
    return path.read_bytes().replace(f",{name},".encode(), f",{to},".encode())


def test_python_default_coap_gives_the_built_in_flows_byte_for_byte(tmp_path):
    res = coaplab.suite_run(SMOKE, cc=["default"], cc_from=[EXAMPLES / "default_coap.py"], out=tmp_path / "s", jobs=2)
    assert res.failed == 0
    # The two NB-IoT experiments (their fasor18 preset applies to every algorithm with the key).
    for experiment in ("nbiot-congested", "nbiot-high-errors"):
        cell = tmp_path / "s" / experiment
        # (summary.csv's bootstrap intervals draw from a seed of the cell's text, cc included.)
        builtin = (cell / "default" / "flows.csv").read_bytes()
        assert b",default," in builtin
        assert renamed(cell / "py-default" / "flows.csv", "py-default", "default") == builtin, experiment


def test_python_default_coap_matches_the_contiki_tick_draw(scenario, tmp_path):
    # Lossy, so that timers expire: the Contiki variant draws whole ticks of a 3-s ACK_TIMEOUT.
    lossy = {"network.loss": "high", "flows.0.count": 6}
    contiki = {**lossy, "flows.0.params.variant": "contiki"}
    rfc = coaplab.run(scenario, out=tmp_path / "r", jobs=1, set=lossy, flows__0__cc="default")
    builtin = coaplab.run(scenario, out=tmp_path / "b", jobs=1, set=contiki, flows__0__cc="default")
    assert builtin.flows["retransmissions"].sum() > 0
    assert builtin.flows["fct_s"].sum() != rfc.flows["fct_s"].sum()
    coaplab.suite.load(EXAMPLES / "default_coap.py")
    python = coaplab.run(scenario, out=tmp_path / "p", jobs=1, set=contiki, flows__0__cc="py-default")
    assert (python.total, python.failed) == (4, 0)
    flows = renamed(python.path / "flows.csv", "py-default", "default")
    assert flows == (builtin.path / "flows.csv").read_bytes()


def test_the_rfc6298_example_is_ranked_on_the_smoke_suite(tmp_path):
    res = coaplab.suite_run(SMOKE, cc=["default", "fasor"], cc_from=[EXAMPLES / "rfc6298.py"], out=tmp_path / "s", jobs=2)
    assert res.failed == 0
    board = res.leaderboard
    mine = board[board["cc"] == "py-rfc6298"]
    assert sorted(mine["experiment"]) == sorted(["nbiot-congested", "nbiot-high-errors", "mesh-grid"])
    assert mine["rank"].between(1, 3).all() and (mine["flows"] > 0).all()
    assert sorted(res.ranking["cc"]) == ["default", "fasor", "py-rfc6298"]
    assert "py-rfc6298" in res.table
    # The same command again: every cell finished, nothing runs, the same ranking.
    again = coaplab.suite_run(SMOKE, cc=["default", "fasor"], cc_from=[EXAMPLES / "rfc6298.py"], out=tmp_path / "s", jobs=2)
    assert again.ranking.equals(res.ranking)


class Shadow:
    name = "fasor"

    def __init__(self, params):
        pass

    def start(self, now_s, x, rng):
        return 1.0

    expired = completed = rto = start


class Raises(Shadow):
    name = "py-raises"

    def start(self, now_s, x, rng):
        raise ValueError("no timer today")


class NoRto:
    name = "py-no-rto"

    def start(self, now_s, x, rng):
        return 1.0

    expired = completed = start


def test_bad_classes_are_refused_and_a_raising_algorithm_fails_its_runs(scenario, tmp_path):
    with pytest.raises(coaplab.AlgorithmNameTaken, match="'fasor': the name is taken"):
        coaplab.register(Shadow)
    with pytest.raises(coaplab.CoaplabError, match="py-no-rto': no method `rto`"):
        coaplab.register(NoRto)
    with pytest.raises(coaplab.CoaplabError, match="names no algorithm; list its classes in ALGORITHMS"):
        empty = tmp_path / "empty.py"
        empty.write_text("x = 1\n")
        coaplab.suite.load(empty)
    assert coaplab.register(Raises) == "py-raises"
    res = coaplab.run(scenario, out=tmp_path / "r", jobs=1, flows__0__cc="py-raises")
    assert (res.total, res.failed) == (4, 4)
    errors = [r.get("error", "") for r in res.manifest["runs"]]
    assert all("Python algorithm 'py-raises': start raised ValueError: no timer today" in e for e in errors), errors[0]


def test_the_module_cli_plans_and_the_command_hands_over(tmp_path):
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "coaplab", "suite", "run", str(SMOKE), "--cc", "default", "--cc-from", str(EXAMPLES / "rfc6298.py"), "--dry-run"]
    o = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert o.returncode == 0, o.stderr
    assert "algorithms: default py-rfc6298" in o.stdout
    o = subprocess.run(cmd[:-3] + ["--cc-from", str(EXAMPLES / "shadow.py"), "--dry-run"], capture_output=True, text=True, cwd=tmp_path)
    assert o.returncode == 1 and "no such file" in o.stderr, o.stderr
    binary = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "coaplab"
    if not binary.exists():
        pytest.skip(f"{binary} not built")
    env["COAPLAB_PYTHON"] = sys.executable
    o = subprocess.run([str(binary)] + cmd[3:], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert o.returncode == 0, o.stderr
    assert "handing over to" in o.stderr and "algorithms: default py-rfc6298" in o.stdout


def test_coaplab_run_hands_a_python_algorithm_over_and_gives_the_built_in_runs(scenario, tmp_path):
    binary = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "coaplab"
    if not binary.exists():
        pytest.skip(f"{binary} not built")
    env = dict(os.environ, COAPLAB_PYTHON=sys.executable)
    common = [str(binary), "run", str(scenario), "--jobs", "1", "-q", "--set", "network.loss=high"]
    builtin = subprocess.run(common + ["--set", "flows.0.cc=default", "--out", str(tmp_path / "b")], capture_output=True, text=True)
    assert builtin.returncode == 0, builtin.stderr
    python = subprocess.run(
        common + ["--set", "flows.0.cc=py-default", "--out", str(tmp_path / "p"), "--cc-from", str(EXAMPLES / "default_coap.py")],
        capture_output=True, text=True, env=env,
    )
    assert python.returncode == 0, python.stderr
    assert "handing over to" in python.stderr
    flows = renamed(tmp_path / "p" / "flows.csv", "py-default", "default")
    assert b"py-default" not in flows and flows == (tmp_path / "b" / "flows.csv").read_bytes()


def test_the_command_reports_and_merges_a_suite_of_python_algorithms(tmp_path):
    binary = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "coaplab"
    if not binary.exists():
        pytest.skip(f"{binary} not built")
    env = dict(os.environ, COAPLAB_PYTHON=sys.executable)
    rfc = str(EXAMPLES / "rfc6298.py")
    whole = coaplab.suite_run(SMOKE, cc=["default"], cc_from=[rfc], out=tmp_path / "whole", jobs=1)
    # The page: the cells of py-rfc6298 are scored by a process that does not know it.
    o = subprocess.run([str(binary), "suite", "report", str(whole.path)], capture_output=True, text=True)
    assert o.returncode == 0, o.stderr
    assert "py-rfc6298" in (whole.path / "suite.html").read_text()
    shards = []
    for k in (1, 2):
        shards.append(str(tmp_path / f"s{k}"))
        run = [str(binary), "suite", "run", str(SMOKE), "--cc", "default", "--cc-from", rfc, "--shard", f"{k}/2", "--out", shards[-1], "-q"]
        o = subprocess.run(run, capture_output=True, text=True, env=env)
        assert o.returncode == 0, o.stderr
    merged = tmp_path / "merged"
    o = subprocess.run([str(binary), "suite", "merge", "--out", str(merged)] + shards + ["--cc-from", rfc], capture_output=True, text=True, env=env)
    assert o.returncode == 0, o.stderr
    for name in ("leaderboard.csv", "ranking.csv"):
        assert (merged / name).read_bytes() == (whole.path / name).read_bytes(), name

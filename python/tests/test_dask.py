"""`coaplab.dask` on a LocalCluster of two workers gives the files of a single-machine run."""

import pytest

import coaplab

distributed = pytest.importorskip("distributed")


def test_dask_shards_merge_into_the_single_machine_files(scenario, tmp_path):
    from coaplab.dask import run_on_dask

    whole = coaplab.run(scenario, out=tmp_path / "whole", jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            merged = run_on_dask(client, scenario, tmp_path / "dask", shards=3)
    assert merged.path == tmp_path / "dask" / "merged"
    assert (merged.total, merged.failed) == (8, 0)
    for name in ("flows.csv", "summary.csv"):
        assert (merged.path / name).read_bytes() == (whole.path / name).read_bytes(), name
    assert sorted(p.name for p in (tmp_path / "dask").iterdir()) == ["merged", "shard-1", "shard-2", "shard-3"]


def test_dask_suite_shards_merge_into_the_single_machine_scores(tmp_path):
    from pathlib import Path

    from coaplab.dask import run_suite_on_dask

    root = Path(__file__).resolve().parents[2]
    smoke = root / "suites" / "smoke.toml"
    algorithm = root / "examples" / "python-algorithm" / "rfc6298.py"
    whole = coaplab.suite_run(smoke, cc=["default"], cc_from=[algorithm], out=tmp_path / "whole", jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            merged = run_suite_on_dask(client, smoke, tmp_path / "dask", cc=["default"], cc_from=[algorithm], shards=2)
    assert merged.path == tmp_path / "dask" / "merged"
    assert merged.failed == 0
    for name in ("leaderboard.csv", "ranking.csv"):
        assert (merged.path / name).read_bytes() == (whole.path / name).read_bytes(), name
    cell = Path("nbiot-congested") / "py-rfc6298" / "flows.csv"
    assert (merged.path / cell).read_bytes() == (whole.path / cell).read_bytes()
    assert sorted(p.name for p in (tmp_path / "dask").iterdir()) == ["merged", "shard-1", "shard-2"]


def test_dask_suite_command_line(tmp_path, capsys):
    from pathlib import Path

    from coaplab.dask import main

    root = Path(__file__).resolve().parents[2]
    argv = ["suite", str(root / "suites" / "smoke.toml"), "--cc", "default", "--shards", "2", "--out", str(tmp_path / "d")]
    argv += ["--cc-from", str(root / "examples" / "python-algorithm" / "rfc6298.py")]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        assert main(argv + ["--scheduler", cluster.scheduler_address]) == 0
    out = capsys.readouterr().out
    assert "py-rfc6298" in out and "overall (mean normalised rank" in out
    assert (tmp_path / "d" / "merged" / "ranking.csv").read_text().count("\n") == 3

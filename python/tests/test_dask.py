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

"""Run one coaplab scenario on a Dask cluster: one shard per task, then a merge.

    python -m coaplab.dask SCENARIO.toml --scheduler tcp://HOST:8786 [--shards N] [--out DIR]
                           [--reps N] [--seed S] [--set KEY=VALUE]...

Each task runs ``coaplab.run(..., shard="K/N", jobs=1)`` on a worker into ``OUT/shard-K``; the
client then merges them into ``OUT/merged``, which is what a single-machine run gives
(flows.csv and summary.csv byte for byte; docs/scenarios.md, "More than one machine"). OUT must
be on a file system the workers and the client share. The scenario text is sent with the tasks,
so only the client needs the file. Workers need this package installed (``pip install
./python``).

From Python: ``coaplab.dask.run_on_dask(client, "scenario.toml", "results/x")``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Optional

import coaplab
from coaplab import _native


def _run_shard(text: str, file: str, out: str, shard: str, sets: list, reps, seed) -> str:
    """One task: shard ``shard`` of the scenario into ``out`` (resumed if it exists)."""
    _native.run(text, file, out, sets, reps, seed, 1, shard, True)
    return out


def run_on_dask(
    client,
    scenario: Any,
    out: "os.PathLike[str] | str",
    *,
    shards: Optional[int] = None,
    reps: Optional[int] = None,
    seed: Optional[int] = None,
    set: Optional[Iterable[str]] = None,
    **overrides: Any,
) -> "coaplab.Results":
    """Runs ``scenario`` (a path or a dict) as ``shards`` tasks on the Dask ``client`` (default:
    one per worker thread), each shard into ``out/shard-K``, and merges them into
    ``out/merged``. Returns the merged :class:`coaplab.Results`."""
    text, file = coaplab._source(scenario)
    sets = coaplab._sets(overrides, set)
    n = shards or max(1, sum(client.nthreads().values()))
    out = Path(out)
    dirs = [os.fspath(out / f"shard-{k}") for k in range(1, n + 1)]
    futures = [
        client.submit(_run_shard, text, file, d, f"{k}/{n}", sets, reps, seed, pure=False)
        for k, d in enumerate(dirs, start=1)
    ]
    client.gather(futures)
    return coaplab.merge(out / "merged", dirs)


def main(argv: Optional[list] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m coaplab.dask", description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", help="the scenario file (TOML)")
    p.add_argument("--scheduler", required=True, help="the Dask scheduler address, e.g. tcp://host:8786")
    p.add_argument("--shards", type=int, help="tasks (default: one per worker thread)")
    p.add_argument("--out", help="results directory (default: results/<name>-dask)")
    p.add_argument("--reps", type=int, help="replications per combination, instead of the file's")
    p.add_argument("--seed", type=int, help="base seed, instead of the file's")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key")
    args = p.parse_args(argv)

    from distributed import Client

    text, file = coaplab._source(args.scenario)
    name = _native.plan(text, file, args.set)[0]
    out = Path(args.out or Path("results") / f"{name}-dask")
    with Client(args.scheduler) as client:
        try:
            res = run_on_dask(client, args.scenario, out, shards=args.shards, reps=args.reps, seed=args.seed, set=args.set)
        except coaplab.CoaplabError as e:
            print(f"coaplab.dask: {e}", file=sys.stderr)
            return 1
    print(res.summary.to_string(index=False))
    print(f"coaplab.dask: {res.total} runs ({res.failed} failed) -> {res.path}", file=sys.stderr)
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())

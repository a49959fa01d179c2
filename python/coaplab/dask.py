"""Run one coaplab scenario, or a suite, on a Dask cluster: one shard per task, then a merge.

    python -m coaplab.dask SCENARIO.toml --scheduler tcp://HOST:8786 [--shards N] [--out DIR]
                           [--reps N] [--seed S] [--set KEY=VALUE]...
    python -m coaplab.dask suite SUITE.toml --scheduler tcp://HOST:8786 [--shards N] [--out DIR]
                           [--cc NAME...] [--cc-from FILE.py...]

Each task runs ``coaplab.run(..., shard="K/N", jobs=1)`` on a worker into ``OUT/shard-K``; the
client then merges them into ``OUT/merged``, which is what a single-machine run gives
(flows.csv and summary.csv byte for byte; docs/scenarios.md, "More than one machine"). OUT must
be on a file system the workers and the client share. The scenario text is sent with the tasks,
so only the client needs the file. Workers need this package installed (``pip install
./python``).

A suite (docs/suite.md) goes the same way: task K runs ``coaplab suite run --shard K/N`` of the
whole suite (every cell's shard K) into ``OUT/shard-K``, and the client joins them with
``coaplab suite merge`` into ``OUT/merged``, scored: its leaderboard.csv and ranking.csv are
those of a single-machine run. The suite file and the scenarios it names are read on the
workers, at the path the client resolves (keep the repository on the shared file system); the
``--cc-from`` Python files are sent with the tasks and registered on each worker.

From Python: ``coaplab.dask.run_on_dask(client, "scenario.toml", "results/x")`` and
``coaplab.dask.run_suite_on_dask(client, "suites/smoke.toml", "results/s", cc=["default"])``.
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


def _run_suite_shard(suite: str, algorithms: list, sources: list, out: str, shard: str) -> str:
    """One task: shard ``shard`` of every cell of the suite into ``out`` (resumed if it
    exists), after registering the Python algorithms ``sources`` ((file name, text) pairs)."""
    from coaplab.suite import load

    for path, text in sources:
        load(path, text)
    _native.suite_run(suite, algorithms, out, 1, shard, None)
    return out


def run_suite_on_dask(
    client,
    suite: "os.PathLike[str] | str",
    out: "os.PathLike[str] | str",
    *,
    cc: Optional[Iterable[str]] = None,
    cc_from: Iterable["os.PathLike[str] | str"] = (),
    shards: Optional[int] = None,
) -> "coaplab.SuiteResults":
    """Runs the suite file ``suite`` for the algorithms ``cc`` (default: every built-in one)
    and those of the Python files ``cc_from`` as ``shards`` tasks on the Dask ``client``
    (default: one per worker thread), each ``coaplab suite run --shard K/N`` into
    ``out/shard-K``, then merges them into ``out/merged`` and scores it. Returns the merged
    :class:`coaplab.SuiteResults`."""
    from coaplab.suite import _algorithms, load

    sources = []
    loaded = []
    for path in cc_from:
        with open(path, encoding="utf-8") as f:
            sources.append((os.fspath(path), f.read()))
        loaded += load(path)
    algorithms = _algorithms(list(cc) if cc else None, loaded)
    suite = os.path.abspath(os.fspath(suite))
    _native.suite_plan(suite, algorithms)  # a bad suite or algorithm fails before any task
    n = shards or max(1, sum(client.nthreads().values()))
    out = Path(out)
    dirs = [os.fspath(out / f"shard-{k}") for k in range(1, n + 1)]
    futures = [
        client.submit(_run_suite_shard, suite, algorithms, sources, d, f"{k}/{n}", pure=False)
        for k, d in enumerate(dirs, start=1)
    ]
    client.gather(futures)
    return coaplab.suite_merge(out / "merged", dirs)


def _suite_main(argv: list) -> int:
    p = argparse.ArgumentParser(prog="python -m coaplab.dask suite", description="Run a suite on a Dask cluster, one shard per task, then merge and score.")
    p.add_argument("suite", help="the suite file (TOML)")
    p.add_argument("--scheduler", required=True, help="the Dask scheduler address, e.g. tcp://host:8786")
    p.add_argument("--shards", type=int, help="tasks (default: one per worker thread)")
    p.add_argument("--out", help="results directory (default: results/suite-<name>-dask)")
    p.add_argument("--cc", nargs="+", default=[], metavar="NAME", help="algorithms [default: every built-in one]")
    p.add_argument("--cc-from", nargs="+", default=[], metavar="FILE.py", help="Python files whose ALGORITHMS take part")
    args = p.parse_args(argv)

    from distributed import Client

    from coaplab.suite import _algorithms, load

    try:
        loaded = [n for path in args.cc_from for n in load(path)]
        name, _ = _native.suite_plan(args.suite, _algorithms(args.cc, loaded))
    except coaplab.CoaplabError as e:
        print(f"coaplab.dask: {e}", file=sys.stderr)
        return 1
    out = Path(args.out or Path("results") / f"suite-{name}-dask")
    with Client(args.scheduler) as client:
        try:
            res = run_suite_on_dask(client, args.suite, out, cc=args.cc, cc_from=args.cc_from, shards=args.shards)
        except coaplab.CoaplabError as e:
            print(f"coaplab.dask: {e}", file=sys.stderr)
            return 1
    print(res.table, end="")
    print(f"coaplab.dask: suite {name} ({res.failed} runs failed) -> {res.path}", file=sys.stderr)
    return 1 if res.failed else 0


def main(argv: Optional[list] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["suite"]:
        return _suite_main(argv[1:])
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

"""python -m coaplab suite run|merge, and run: the commands with algorithms written in Python.

    python -m coaplab suite run [SUITE.toml] [--cc NAME...] [--cc-from FILE.py...] [--out DIR]
                                [--jobs J] [--shard K/N] [--dry-run] [--quiet]
    python -m coaplab suite merge --out OUT DIR... [--cc-from FILE.py...]
    python -m coaplab run SCENARIO.toml --cc-from FILE.py... [--out DIR] [--reps N] [--seed S]
                          [--jobs J] [--resume] [--dry-run] [--set KEY=VALUE]... [--shard K/N]
                          [--trace DIR] [--trace-runs RUNS] [--trace-format FORMAT] [--quiet]

The flags are those of ``coaplab suite run`` and ``coaplab run`` (docs/suite.md), which hand a
command with ``--cc-from FILE.py`` over to this module (simulated runs only). The algorithms of the Python files (their
``ALGORITHMS`` lists) are compared beside the ``--cc`` ones (default: every built-in one).
``coaplab suite report DIR`` draws the page of the results.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional

from . import _native
from .suite import load, _algorithms, _default_out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m coaplab", description=__doc__.split("\n\n")[0])
    top = p.add_subparsers(dest="command", required=True)
    suite = top.add_parser("suite", help="benchmark suites (docs/suite.md)")
    sub = suite.add_subparsers(dest="action", required=True)
    run = sub.add_parser("run", help="run a suite for the chosen algorithms, then score it")
    run.add_argument("suite", nargs="?", default="suites/standard.toml", metavar="SUITE.toml")
    run.add_argument("--cc", nargs="+", default=[], metavar="NAME", help="algorithms [default: every built-in one]")
    run.add_argument("--cc-from", nargs="+", default=[], metavar="FILE.py", help="Python files whose ALGORITHMS take part")
    run.add_argument("--out", metavar="DIR", help="results directory [default: results/suite-<name>-<UTC time>]")
    run.add_argument("--jobs", type=int, metavar="J", help="runs simulated at once [default: the number of cores]")
    run.add_argument("--shard", metavar="K/N", help="only shard K of N of every cell")
    run.add_argument("--dry-run", action="store_true", help="check and print the plan only")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    merge = sub.add_parser("merge", help="join the shards of one suite run, then score it")
    merge.add_argument("dirs", nargs="+", metavar="DIR")
    merge.add_argument("--out", required=True, metavar="OUT")
    merge.add_argument("--cc-from", nargs="+", default=[], metavar="FILE.py", help="Python files of the algorithms the shards ran")
    one = top.add_parser("run", help="simulate a scenario (coaplab run), with algorithms written in Python")
    one.add_argument("scenario", metavar="SCENARIO.toml")
    one.add_argument("--cc-from", nargs="+", default=[], metavar="FILE.py", help="Python files whose ALGORITHMS the scenario may name")
    one.add_argument("--out", metavar="DIR")
    one.add_argument("--reps", type=int, metavar="N")
    one.add_argument("--seed", type=int, metavar="S")
    one.add_argument("--jobs", type=int, metavar="J")
    one.add_argument("--resume", action="store_true")
    one.add_argument("--dry-run", action="store_true")
    one.add_argument("--mode", default="simulated", choices=["simulated"], help="simulated only: emulated runs are the command's")
    one.add_argument("--trace", metavar="DIR")
    one.add_argument("--trace-runs", metavar="RUNS")
    one.add_argument("--trace-format", metavar="FORMAT")
    one.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    one.add_argument("--shard", metavar="K/N")
    one.add_argument("-q", "--quiet", action="store_true")
    return p


def _run_one(args) -> int:
    import coaplab

    for path in args.cc_from:
        load(path)
    if args.dry_run:
        plan = coaplab.plan(args.scenario, reps=args.reps, set=args.set)
        print(f"{plan['name']}: {plan['combinations']} combinations, {plan['runs']} runs")
        for axis in plan["axes"]:
            print(f"  {axis['key']}: {' '.join(axis['values'])}")
        return 0
    trace = args.trace_runs if args.trace_runs is not None else (True if args.trace else None)
    res = coaplab.run(
        args.scenario,
        out=args.out,
        reps=args.reps,
        seed=args.seed,
        jobs=args.jobs,
        shard=args.shard,
        resume=args.resume,
        trace=trace,
        trace_dir=args.trace,
        trace_format=args.trace_format,
        progress=not args.quiet,
        set=args.set,
    )
    print(f"coaplab run: {res.total} runs ({res.failed} failed) -> {res.path}", file=sys.stderr)
    return 1 if res.failed else 0


def _run(args) -> int:
    loaded = [name for path in args.cc_from for name in load(path)]
    algorithms = _algorithms(args.cc, loaded)
    if args.dry_run:
        print(_native.suite_plan(args.suite, algorithms)[1], end="")
        return 0
    if args.jobs is not None and args.jobs < 1:
        print("python -m coaplab suite run: --jobs must be at least 1", file=sys.stderr)
        return 2
    out = args.out or str(_default_out(args.suite, algorithms))
    import os

    jobs = args.jobs or os.cpu_count() or 1
    print(
        f"coaplab suite: {args.suite}: {len(algorithms)} algorithms ({' '.join(algorithms)}) on {jobs} threads -> {out}",
        file=sys.stderr,
    )

    def log(line: str) -> None:
        if not args.quiet or " failed: " in line:
            print(f"coaplab suite: {line}", file=sys.stderr)

    cells, skipped, failed = _native.suite_run(args.suite, algorithms, out, jobs, args.shard, log)
    if args.shard is None:
        print(_native.suite_scores(out), end="")
    print(
        f"coaplab suite: {cells - skipped} cells run, {skipped} skipped (finished earlier), {failed} runs failed"
        + ("" if args.shard else f"; coaplab suite report {out} writes the page"),
        file=sys.stderr,
    )
    return 1 if failed else 0


def main(argv: Optional[list] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run_one(args)
        if args.action == "run":
            return _run(args)
        for path in args.cc_from:
            load(path)
        total, failed = _native.suite_merge(args.out, args.dirs)
        print(_native.suite_scores(args.out), end="")
        print(f"coaplab suite merge: {total} runs from {len(args.dirs)} directories ({failed} failed) -> {args.out}", file=sys.stderr)
        return 1 if failed else 0
    except _native.CoaplabError as e:
        print(f"coaplab {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""``python -m coaplab suite run|merge``: ``coaplab suite`` with algorithms written in Python.

    python -m coaplab suite run [SUITE.toml] [--cc NAME...] [--cc-from FILE.py...] [--out DIR]
                                [--jobs J] [--shard K/N] [--dry-run] [--quiet]
    python -m coaplab suite merge --out OUT DIR...

The flags are those of ``coaplab suite run`` (docs/suite.md), which hands a command with
``--cc-from FILE.py`` over to this module. The algorithms of the Python files (their
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
    return p


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
        if args.action == "run":
            return _run(args)
        total, failed = _native.suite_merge(args.out, args.dirs)
        print(_native.suite_scores(args.out), end="")
        print(f"coaplab suite merge: {total} runs from {len(args.dirs)} directories ({failed} failed) -> {args.out}", file=sys.stderr)
        return 1 if failed else 0
    except _native.CoaplabError as e:
        print(f"coaplab suite: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

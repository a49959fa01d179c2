#!/usr/bin/env python3
"""The CPU cost per event of an algorithm written in Python (docs/suite.md, "Speed").

    python scripts/python-algorithm-speed.py [--reps N]

needs the coaplab Python package (`pip install ./python`, a release build). Runs the smoke
suite's first cell (quickstart.toml: 200 clients x 20 exchanges, 2 replications, on one
thread) with the built-in `default` and with its Python rewrite `py-default`
(examples/python-algorithm/default_coap.py), which give the same runs; counts the Python calls
with a counting subclass in a separate run; and prints the CPU time of this process (all its
threads, time.process_time; the least of N repetitions), the extra CPU time per Python call,
and the same for the whole smoke suite. CPU time, not wall time: on a busy machine the wall
time measures the other processes.
"""

import argparse
import collections
import tempfile
import time
import warnings
from pathlib import Path

import coaplab

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=5, help="repetitions of each measurement (the least counts)")
    reps = p.parse_args().reps
    warnings.simplefilter("ignore", coaplab.UnfinishedFlowsWarning)
    module = coaplab.suite._module_of(ROOT / "examples/python-algorithm/default_coap.py")
    coaplab.register(module.DefaultCoap)
    calls: collections.Counter = collections.Counter()

    class Counted(module.DefaultCoap):
        name = "py-default-counted"

    def counting(method):
        base = getattr(module.DefaultCoap, method)

        def call(self, *args):
            calls[method] += 1
            return base(self, *args)

        return call

    for method in ("start", "expired", "completed", "rto"):
        setattr(Counted, method, counting(method))
    coaplab.register(Counted)

    sets = ["network.buffer_bytes=[2500]", "flows.0.count=200", "flows.0.exchanges=20", "replications=2"]
    scenario = ROOT / "scenarios/quickstart.toml"
    tmp = Path(tempfile.mkdtemp(prefix="coaplab-pyspeed-"))

    def cpu(label, f):
        times = []
        for k in range(reps):
            t = time.process_time()
            f(tmp / f"{label}-{k}")
            times.append(time.process_time() - t)
        return min(times)

    def sweep(cc):
        return lambda out: coaplab.run(scenario, out=out, jobs=1, progress=False, set=sets + [f"flows.0.cc={cc}"])

    sweep("py-default-counted")(tmp / "counted")
    n = sum(calls.values())
    builtin, python = cpu("default", sweep("default")), cpu("py-default", sweep("py-default"))
    print(f"quickstart cell: default {builtin * 1e3:.1f} ms CPU, py-default {python * 1e3:.1f} ms "
          f"(x{python / builtin:.2f}); {n} Python calls {dict(calls)}")
    print(f"extra CPU per Python call: {(python - builtin) / n * 1e6:.2f} us")
    suite = ROOT / "suites/smoke.toml"
    for cc in ("default", "py-default"):
        t = cpu(f"suite-{cc}", lambda out, cc=cc: coaplab.suite_run(suite, cc=[cc], out=out, jobs=1))
        print(f"smoke suite, {cc} alone: {t * 1e3:.1f} ms CPU")


if __name__ == "__main__":
    main()

"""coaplab from Python: run scenarios, trace algorithms and list their parameters.

The simulator is the Rust code of the ``coaplab`` command (through the ``coaplab._native``
extension), so a scenario run from Python writes the same results directory, byte for byte, as
``coaplab run``::

    import coaplab
    res = coaplab.run("scenarios/quickstart.toml", reps=2, network__buffer_bytes=2500)
    res.flows        # pandas.DataFrame of flows.csv
    res.summary      # pandas.DataFrame of summary.csv
    res.timers       # timers.csv, with [output] timers (output__timers=True)
    res.traces[0].events   # events.parquet of traced run 0 (run(..., trace=[0]))
    coaplab.trace("fasor", "0 send\\n0.8 ack\\n", dither="off")   # DataFrame of the trace CSV
    coaplab.algorithms()                                           # DataFrame, one row per algorithm
    coaplab.parameters("cocoa")                                    # DataFrame, one row per parameter
    coaplab.suite_run("suites/smoke.toml", cc=["default"], cc_from=["my_rto.py"])  # a suite

Scenario keys are overridden as keyword arguments, ``__`` standing for the dot of the command
line's ``--set network.buffer_bytes=2500`` (``flows__0__cc="fasor"``), or with
``set={"network.buffer_bytes": 2500}``; a Python list is a sweep axis. See docs/python.md.
"""

from __future__ import annotations

import datetime as _dt
import json as _json
import math as _math
import os as _os
import warnings as _warnings
from dataclasses import dataclass as _dataclass
from pathlib import Path as _Path
from collections import abc as _abc
from typing import Any, Callable, Iterable, Mapping, Optional, Union

import pandas as _pd

from . import _native
from ._native import AlgorithmNameTaken, CoaplabError

__all__ = [
    "AlgorithmNameTaken",
    "CoaplabError",
    "Results",
    "RunTrace",
    "SuiteResults",
    "Traces",
    "UnfinishedFlowsWarning",
    "algorithms",
    "censored_quantile",
    "code_version",
    "merge",
    "parameters",
    "plan",
    "read_results",
    "read_suite",
    "register",
    "run",
    "suite_merge",
    "suite_plan",
    "suite_run",
    "to_toml",
    "trace",
]

Scenario = Union[str, "_os.PathLike[str]", Mapping[str, Any]]


@_dataclass
class Results:
    """A results directory, read: the same files ``coaplab run`` writes."""

    path: _Path
    """The results directory."""
    flows: _pd.DataFrame
    """flows.csv: one row per flow."""
    summary: _pd.DataFrame
    """summary.csv: one row per (combination, cc, workload), replications pooled."""
    runs: _pd.DataFrame
    """runs.csv: one row per run (status, wall time, bottleneck counters)."""
    manifest: dict
    """manifest.json: the plan, the code version and every run's status."""
    total: int = 0
    """Runs in the plan (or in the shard)."""
    failed: int = 0
    """Runs that failed (their errors are in manifest["runs"])."""
    trace_dir: Optional[_Path] = None
    """Where the traces were written (``run(..., trace=...)``); None: ``path / "trace"``."""

    @property
    def timers(self) -> _pd.DataFrame:
        """timers.csv (``[output] timers = true``, or ``output__timers=True``): one row per
        expired CoAP retransmission timer (run, flow, time_s, rto_s, ordinal)."""
        return self._side("timers.csv", "timers")

    @property
    def intervals(self) -> _pd.DataFrame:
        """intervals.csv (on a mesh, or ``[output] intervals = true``): payload per flow and
        50-ms interval (run, flow, interval, start_s, bytes, throughput_bps)."""
        return self._side("intervals.csv", "intervals")

    @property
    def exchanges(self) -> _pd.DataFrame:
        """exchanges.csv (``[output] exchanges = true``): one row per ended exchange (run, flow,
        start_s, end_s, delay_s, transmissions, rto_base_s; delay_s NaN for a failed one)."""
        return self._side("exchanges.csv", "exchanges")

    def _side(self, name: str, key: str) -> _pd.DataFrame:
        cache = self.__dict__.setdefault("_loaded", {})
        if name not in cache:
            path = self.path / name
            if not path.exists():
                raise FileNotFoundError(
                    f"{path}: not written by this sweep; [output] {key} = true in the scenario "
                    f"(or output__{key}=True to coaplab.run) writes it"
                )
            cache[name] = _pd.read_csv(path)
        return cache[name]

    @property
    def traces(self) -> "Traces":
        """The traces of the traced runs (``run(..., trace=[0, 5])``, ``[output] trace``, or
        ``coaplab run --trace``): ``res.traces[5].events`` and the like, one
        :class:`RunTrace` per run; ``res.traces.events`` is every traced run's events.
        Empty when nothing was traced."""
        if "_traces" not in self.__dict__:
            self.__dict__["_traces"] = Traces(self.trace_dir or self.path / "trace")
        return self.__dict__["_traces"]

    @property
    def unfinished(self) -> _pd.DataFrame:
        """The rows of flows.csv of the unfinished flows (``unfinished`` is ``gave_up`` or
        ``time_cap``): censored observations, whose FCT is at least their ``elapsed_s``."""
        if "unfinished" not in self.flows.columns:  # results format 1
            return self.flows[~self.flows["completed"].astype(bool)]
        return self.flows[self.flows["unfinished"].notna()]


_TRACE_TABLES = ("events", "queue", "tcp", "frames")


def _read_table(path: _Path) -> _pd.DataFrame:
    """A trace table: Parquet through pyarrow, or CSV (``trace_format="csv"``)."""
    if path.suffix == ".parquet":
        return _pd.read_parquet(path, engine="pyarrow")
    text = ("event", "state", "vars", "reason", "link", "cause", "kind")
    return _pd.read_csv(path, dtype={c: "string" for c in text})


def _table_property(name: str, doc: str) -> property:
    """A property reading trace table ``name`` through the class's ``table``."""
    return property(lambda self: self.table(name), doc=doc)


class RunTrace:
    """The trace of one run, ``DIR/runNNNNNN/``: its tables as DataFrames, read on first use
    (``events``, ``queue``, ``tcp``, ``frames``; None for a table the run did not write: a
    CoAP over UDP run has no ``tcp``, a mesh run no ``queue`` but ``frames``), and its
    captures (``pcap("up")``; a mesh run's ``mesh_pcap()``). Columns: docs/scenarios.md,
    "Traces"."""

    def __init__(self, path: _Path, run: int):
        self.path = _Path(path)
        """The run's trace directory."""
        self.run = run
        """The run id (as in flows.csv)."""
        self._tables: dict = {}

    def __repr__(self) -> str:
        return f"RunTrace(run={self.run}, tables={self.tables()}, path={str(self.path)!r})"

    def tables(self) -> list:
        """The names of the tables this run wrote (``events``, ``queue``, ...)."""
        return [t for t in _TRACE_TABLES if self._file(t) is not None]

    def _file(self, name: str) -> Optional[_Path]:
        for ext in (".parquet", ".csv"):
            path = self.path / (name + ext)
            if path.exists():
                return path
        return None

    def table(self, name: str) -> Optional[_pd.DataFrame]:
        """Table ``name`` (``events``, ``queue``, ``tcp``, ``frames``), or None when the run
        did not write it."""
        if name not in _TRACE_TABLES:
            raise ValueError(f"unknown trace table {name!r}: expected one of {', '.join(_TRACE_TABLES)}")
        if name not in self._tables:
            path = self._file(name)
            self._tables[name] = None if path is None else _read_table(path)
        return self._tables[name]

    events = _table_property(
        "events",
        "events: per flow, every transmission, timer expiry, RTT sample, failure, and the "
        "algorithm's RTO and state after every exchange.",
    )
    queue = _table_property("queue", "queue: each bottleneck FIFO's enqueues, dequeues, drops (star runs).")
    tcp = _table_property("tcp", "tcp: cwnd, ssthresh, RTO, SRTT per ACK (CoAP over TCP runs).")
    frames = _table_property("frames", "frames: every 802.15.4 frame on air (mesh runs).")

    def pcap(self, direction: str = "up") -> Optional[_Path]:
        """The capture of bottleneck direction ``"up"`` or ``"down"`` (Wireshark, tshark,
        scapy), or None (mesh runs)."""
        if direction not in ("up", "down"):
            raise ValueError(f"direction {direction!r}: expected 'up' or 'down'")
        path = self.path / f"link-{direction}.pcap"
        return path if path.exists() else None

    def mesh_pcap(self) -> Optional[_Path]:
        """The 802.15.4 capture of a mesh run, ``mesh.pcapng``: every frame on air with its
        MAC header, 6LoWPAN and the CoAP inside (tshark, Wireshark), or None (star runs)."""
        path = self.path / "mesh.pcapng"
        return path if path.exists() else None


class Traces(_abc.Mapping):
    """The traced runs of a sweep (a directory of ``runNNNNNN/``), as a mapping from run id to
    :class:`RunTrace`: ``traces[5].queue``, ``list(traces)`` the run ids. ``traces.events``
    (and ``queue``, ``tcp``, ``frames``) are one table over every traced run, with a first
    column ``run``."""

    def __init__(self, path: _Path):
        self.path = _Path(path)
        """The trace directory."""
        self._runs: dict = {}
        if self.path.is_dir():
            for d in sorted(self.path.iterdir()):
                name = d.name
                if d.is_dir() and name.startswith("run") and name[3:].isdigit():
                    self._runs[int(name[3:])] = RunTrace(d, int(name[3:]))

    def __getitem__(self, run: int) -> RunTrace:
        try:
            return self._runs[run]
        except KeyError:
            traced = ", ".join(map(str, self._runs)) or "none"
            raise KeyError(f"run {run} was not traced (traced runs: {traced}; in {self.path})") from None

    def __iter__(self):
        return iter(self._runs)

    def __len__(self) -> int:
        return len(self._runs)

    def __repr__(self) -> str:
        return f"Traces(runs={list(self._runs)}, path={str(self.path)!r})"

    def table(self, name: str) -> _pd.DataFrame:
        """Table ``name`` of every traced run that wrote it, stacked, with a first column
        ``run``; empty when none did."""
        frames = []
        for run, trace in self._runs.items():
            frame = trace.table(name)
            if frame is not None:
                frames.append(frame.assign(run=run)[["run", *frame.columns]])
        if not frames:
            return _pd.DataFrame(columns=["run"])
        return _pd.concat(frames, ignore_index=True)

    events = _table_property("events", "Every traced run's events, with a column ``run``.")
    queue = _table_property("queue", "Every traced run's queue table, with a column ``run``.")
    tcp = _table_property("tcp", "Every traced run's tcp table, with a column ``run``.")
    frames = _table_property("frames", "Every traced mesh run's frames, with a column ``run``.")


class UnfinishedFlowsWarning(UserWarning):
    """Issued by :func:`read_results` (so by :func:`run` and :func:`merge`) when a results
    directory has unfinished flows: their FCTs are censored, and summary.csv leaves every FCT
    percentile they make unbounded empty (docs/scenarios.md, "Unfinished flows")."""


def censored_quantile(finished: Iterable[float], censored: Iterable[float], p: float) -> tuple:
    """Quantile ``p`` (Hyndman-Fan type 7, as summary.csv) of a sample in which ``finished``
    are observed values and ``censored`` are lower bounds of values never observed (the
    ``elapsed_s`` of unfinished flows). Censored values rank above every finished one. Returns
    ``(value, exact)``: ``exact`` is False when the interpolation reads a censored order
    statistic, and ``value`` is then only a lower bound (the quantile is unbounded). ``(nan,
    False)`` for an empty sample."""
    fin = sorted(float(x) for x in finished if not _math.isnan(float(x)))
    cen = sorted(float(x) for x in censored)
    n = len(fin) + len(cen)
    if n == 0:
        return (float("nan"), False)
    top = fin[-1] if fin else -_math.inf
    order = fin + [max(c, top) for c in cen]
    h = (n - 1) * min(max(p, 0.0), 1.0)
    lo = _math.floor(h)
    hi = min(lo + 1, n - 1)
    if h == lo or order[lo] == order[hi]:
        value = order[lo]
    else:
        value = order[lo] + (h - lo) * (order[hi] - order[lo])
    exact = lo < len(fin) and not (h > lo and lo + 1 >= len(fin))
    return (value, exact)


def _toml_value(value: Any) -> str:
    """A Python value as TOML value text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if _math.isnan(value):
            raise ValueError("NaN is not a scenario value")
        if _math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as a scenario value")


def _key(key: str) -> str:
    bare = key and all(c.isalnum() or c in "_-" for c in key)
    return key if bare else _json.dumps(key)


def _is_table_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, Mapping) for v in value)


def to_toml(scenario: Mapping[str, Any]) -> str:
    """A scenario given as a dict (as ``tomllib`` reads one) as TOML text: tables become
    ``[table]`` sections and lists of tables ``[[table]]`` sections."""

    def table(path: str, body: Mapping[str, Any], header: str) -> list:
        lines = [header] if header else []
        nested = []
        for k, v in body.items():
            sub = f"{path}.{_key(k)}" if path else _key(k)
            if isinstance(v, Mapping):
                nested.append(("table", sub, v))
            elif _is_table_list(v):
                nested.append(("array", sub, v))
            else:
                lines.append(f"{_key(k)} = {_toml_value(v)}")
        out = ["\n".join(lines)] if lines else []
        for kind, sub, v in nested:
            if kind == "table":
                out.extend(table(sub, v, f"[{sub}]"))
            else:
                for element in v:
                    out.extend(table(sub, element, f"[[{sub}]]"))
        return out

    return "\n".join(table("", scenario, "")) + "\n"


def _source(scenario: Scenario) -> tuple:
    """(text, file label) of a scenario path or dict."""
    if isinstance(scenario, Mapping):
        name = scenario.get("name", "scenario")
        return to_toml(scenario), f"<dict {name}>"
    path = _os.fspath(scenario)
    with open(path, encoding="utf-8") as f:
        return f.read(), path


def _sets(overrides: Mapping[str, Any], set: Optional[Union[Mapping[str, Any], Iterable[str]]]) -> list:
    """`--set KEY=VALUE` strings: ``set`` first (a dict of dotted keys, or KEY=VALUE strings),
    then the keyword overrides with ``__`` as the dot."""
    out = []
    if isinstance(set, Mapping):
        out += [f"{k}={_toml_value(v)}" for k, v in set.items()]
    elif set is not None:
        out += [str(s) for s in set]
    out += [f"{k.replace('__', '.')}={_toml_value(v)}" for k, v in overrides.items()]
    return out


def read_results(path: Union[str, "_os.PathLike[str]"]) -> Results:
    """Reads a results directory (of ``coaplab run``, ``coaplab merge`` or :func:`run`)."""
    path = _Path(path)
    with open(path / "manifest.json", encoding="utf-8") as f:
        manifest = _json.load(f)
    # Numbers are parsed as numbers and empty cells are NaN; the space-separated counts and
    # the error texts stay strings.
    text_columns = {"transmission_counts": "string", "error": "string", "unfinished": "string"}
    flows = _pd.read_csv(path / "flows.csv", dtype=text_columns)
    summary = _pd.read_csv(path / "summary.csv", dtype=text_columns)
    runs = _pd.read_csv(path / "runs.csv", dtype=text_columns)
    statuses = [r["status"] for r in manifest["runs"]]
    _warn_unfinished(summary)
    return Results(
        path=path,
        flows=flows,
        summary=summary,
        runs=runs,
        manifest=manifest,
        total=len(statuses),
        failed=statuses.count("failed"),
    )


def _warn_unfinished(summary: _pd.DataFrame) -> None:
    """An :class:`UnfinishedFlowsWarning` when summary.csv counts unfinished flows."""
    if "incomplete" not in summary.columns or summary.empty:
        return
    flows = int(summary["incomplete"].sum())
    short = int(summary["fct50_unfinished"].sum()) if "fct50_unfinished" in summary.columns else 0
    if flows == 0 and short == 0:
        return
    parts = []
    if flows:
        cells = int((summary["incomplete"] > 0).sum())
        if "unfinished_gave_up" in summary.columns:
            gave_up = int(summary["unfinished_gave_up"].sum())
            why = f"{gave_up} gave up, {flows - gave_up} cut by the time cap"
        else:
            why = "why not recorded: results format 1, which also left them out of the FCT statistics"
        parts.append(
            f"{flows} unfinished flows in {cells} of {len(summary)} cells ({why}): their FCTs are "
            "censored, and every FCT percentile they leave unbounded is empty in summary "
            "(fct_p50_at_least_s bounds the median)"
        )
    if short:
        parts.append(f"{short} mesh flows never got 50 answers (fct50_s_median censored alike)")
    text = "; ".join(parts)
    _warnings.warn(text, UnfinishedFlowsWarning, stacklevel=3)


def _default_out(name: str) -> _Path:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    return _Path("results") / f"{name}-{stamp}"


Progress = Union[bool, Callable[[int, int, int], Any]]


def _progress_callback(progress: Progress) -> tuple:
    """(callback for the native run, function closing the bar) of ``run``'s ``progress``."""
    if callable(progress) and not isinstance(progress, bool):
        return progress, lambda: None
    if not progress:
        return None, lambda: None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # the bar is optional: pip install tqdm
        return None, lambda: None
    state: dict = {}

    def callback(done: int, total: int, failed: int) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = tqdm(total=total, unit="run", desc="coaplab", dynamic_ncols=True)
        bar.update(done - bar.n)
        if failed:
            bar.set_postfix(failed=failed, refresh=False)

    def close() -> None:
        if "bar" in state:
            state["bar"].close()

    return callback, close


def _trace_runs(trace: Any) -> Optional[str]:
    """``run``'s ``trace`` as ``--trace-runs`` text (None: the default selection)."""
    if trace is None or isinstance(trace, bool):
        return None
    if isinstance(trace, int):
        return str(trace)
    if isinstance(trace, str):
        return trace
    return ",".join(str(int(r)) for r in trace)


def run(
    scenario: Scenario,
    *,
    out: Optional[Union[str, "_os.PathLike[str]"]] = None,
    reps: Optional[int] = None,
    seed: Optional[int] = None,
    jobs: Optional[int] = None,
    shard: Optional[str] = None,
    resume: bool = False,
    trace: Union[None, bool, int, str, Iterable[int]] = None,
    trace_dir: Optional[Union[str, "_os.PathLike[str]"]] = None,
    trace_format: Optional[str] = None,
    progress: Progress = True,
    set: Optional[Union[Mapping[str, Any], Iterable[str]]] = None,
    **overrides: Any,
) -> Results:
    """Simulates a scenario (a file path, or a dict as ``tomllib`` reads one) as ``coaplab
    run`` does and returns its results as DataFrames.

    ``out`` is the results directory (default ``results/<name>-<UTC time>``); ``reps``,
    ``seed``, ``jobs``, ``shard`` ("K/N") and ``resume`` are the flags of the same names.
    Keyword overrides set scenario keys, ``__`` for the dot (``network__buffer_bytes=2500``,
    ``flows__0__cc=["default", "fasor"]``), as do the entries of ``set`` (dotted keys). They
    are recorded in the manifest. Raises :class:`CoaplabError` for a scenario or directory the
    command would refuse, with the same message.

    ``trace`` traces runs as ``--trace-runs``: run ids (``[0, 5]``, ``5``), a selection text
    (``"0,5,10-12"``, ``"first"``), True (the scenario's ``[output] trace``, else run 0) or
    False (none, whatever the scenario says); None (default) follows the scenario's
    ``[output] trace``. ``trace_dir`` (default ``OUT/trace``) and ``trace_format``
    (``"parquet"`` or ``"csv"``) are ``--trace`` and ``--trace-format``; ``res.traces``
    reads the tables.

    ``progress``: True draws a tqdm bar (when tqdm is installed), False nothing, a callable
    is called as ``progress(done, total, failed)`` after each run. Ctrl-C (KeyboardInterrupt)
    stops the sweep: the runs under way end and are recorded, the results files are written
    for the runs finished, and the KeyboardInterrupt is raised; ``resume=True`` continues.
    An exception raised by a ``progress`` callable stops the sweep the same way.
    """
    text, file = _source(scenario)
    sets = _sets(overrides, set)
    name = _native.plan(text, file, sets)[0]
    out = _Path(out) if out is not None else _default_out(name)
    if trace_dir is None and trace is not None and trace is not False:
        trace_dir = out / "trace"  # trace=[...] or True: on, into OUT/trace as the command
    callback, close = _progress_callback(progress)
    try:
        total, _ok, _skipped, failed, traced = _native.run(
            text,
            file,
            _os.fspath(out),
            sets,
            reps,
            seed,
            jobs,
            shard,
            resume,
            None if trace_dir is None else _os.fspath(trace_dir),
            _trace_runs(trace),
            trace_format,
            trace is False,
            callback,
        )
    finally:
        close()
    res = read_results(out)
    res.total, res.failed = total, failed
    res.trace_dir = _Path(traced) if traced is not None else None
    return res


def merge(out: Union[str, "_os.PathLike[str]"], dirs: Iterable[Union[str, "_os.PathLike[str]"]]) -> Results:
    """Joins shard directories into ``out``, as ``coaplab merge --out OUT DIR...``."""
    total, failed = _native.merge(_os.fspath(out), [_os.fspath(d) for d in dirs])
    res = read_results(out)
    res.total, res.failed = total, failed
    return res


def plan(scenario: Scenario, *, reps: Optional[int] = None, set=None, **overrides: Any) -> dict:
    """Checks a scenario and returns its plan, as ``coaplab run --dry-run`` prints it."""
    text, file = _source(scenario)
    name, combinations, runs, axes = _native.plan(text, file, _sets(overrides, set), reps)
    return {
        "name": name,
        "combinations": combinations,
        "runs": runs,
        "axes": [{"key": k, "column": c, "values": v} for k, c, v in axes],
    }


def trace(cc: str, timeline: str, *, seed: int = 1, set=None, **params: Any) -> _pd.DataFrame:
    """Replays a timeline (the ``coaplab trace`` file format: ``0 send``, ``0.8 ack``, ...)
    through algorithm ``cc`` and returns every transmission, expiry, completion and give-up.
    Keyword arguments set algorithm parameters (``dither="off"``, ``preset="fasor18"``), as
    ``coaplab trace --set KEY=VALUE`` does."""
    sets = _sets_params(params, set)
    import io

    csv = _native.trace(cc, timeline, sets, seed)
    return _pd.read_csv(io.StringIO(csv), dtype={"state": "string"})


def _param_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _sets_params(params: Mapping[str, Any], set) -> list:
    out = []
    if isinstance(set, Mapping):
        out += [f"{k}={_param_text(v)}" for k, v in set.items()]
    elif set is not None:
        out += [str(s) for s in set]
    out += [f"{k}={_param_text(v)}" for k, v in params.items()]
    return out


def algorithms() -> _pd.DataFrame:
    """Every algorithm (name, summary, number of parameters), as ``coaplab algorithms``."""
    rows = [(n, s, len(p)) for n, s, p in _native.algorithms()]
    return _pd.DataFrame(rows, columns=["name", "summary", "parameters"])


def parameters(name: Optional[str] = None) -> _pd.DataFrame:
    """Every parameter of algorithm ``name`` (of every algorithm when None): key, default,
    range, help and source, as ``coaplab algorithms NAME``."""
    rows = [p for n, _s, ps in _native.algorithms() if name in (None, n) for p in ps]
    if name is not None and not rows and name not in algorithms()["name"].tolist():
        raise CoaplabError(f"unknown algorithm '{name}'")
    return _pd.DataFrame(rows, columns=["algorithm", "key", "default", "range", "help", "source"])


def code_version() -> str:
    """The version string the manifests record (crate version and git commit)."""
    return _native.code_version()


# Suites and algorithms written in Python (docs/suite.md); imported last, as it uses the above.
from .suite import SuiteResults, read_suite, register, suite_merge, suite_plan, suite_run  # noqa: E402

"""coaplab from Python: run scenarios, trace algorithms and list their parameters.

The simulator is the Rust code of the ``coaplab`` command (through the ``coaplab._native``
extension), so a scenario run from Python writes the same results directory, byte for byte, as
``coaplab run``::

    import coaplab
    res = coaplab.run("scenarios/quickstart.toml", reps=2, network__buffer_bytes=2500)
    res.flows        # pandas.DataFrame of flows.csv
    res.summary      # pandas.DataFrame of summary.csv
    coaplab.trace("fasor", "0 send\\n0.8 ack\\n", dither="off")   # DataFrame of the trace CSV
    coaplab.algorithms()                                           # DataFrame, one row per algorithm
    coaplab.parameters("cocoa")                                    # DataFrame, one row per parameter

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
from typing import Any, Iterable, Mapping, Optional, Union

import pandas as _pd

from . import _native
from ._native import CoaplabError

__all__ = [
    "CoaplabError",
    "Results",
    "UnfinishedFlowsWarning",
    "algorithms",
    "censored_quantile",
    "code_version",
    "merge",
    "parameters",
    "plan",
    "read_results",
    "run",
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

    @property
    def unfinished(self) -> _pd.DataFrame:
        """The rows of flows.csv of the unfinished flows (``unfinished`` is ``gave_up`` or
        ``time_cap``): censored observations, whose FCT is at least their ``elapsed_s``."""
        if "unfinished" not in self.flows.columns:  # results format 1
            return self.flows[~self.flows["completed"].astype(bool)]
        return self.flows[self.flows["unfinished"].notna()]


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


def run(
    scenario: Scenario,
    *,
    out: Optional[Union[str, "_os.PathLike[str]"]] = None,
    reps: Optional[int] = None,
    seed: Optional[int] = None,
    jobs: Optional[int] = None,
    shard: Optional[str] = None,
    resume: bool = False,
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
    """
    text, file = _source(scenario)
    sets = _sets(overrides, set)
    name = _native.plan(text, file, sets)[0]
    out = _Path(out) if out is not None else _default_out(name)
    total, _ok, _skipped, failed = _native.run(
        text, file, _os.fspath(out), sets, reps, seed, jobs, shard, resume
    )
    res = read_results(out)
    res.total, res.failed = total, failed
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

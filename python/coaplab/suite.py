"""Benchmark suites from Python (``coaplab suite``, docs/suite.md), with algorithms written in
Python taking part beside the built-in ones::

    import coaplab
    res = coaplab.suite_run("suites/smoke.toml", cc=["default"],
                            cc_from=["examples/python-algorithm/rfc6298.py"], out="results/s")
    res.leaderboard      # leaderboard.csv (DataFrame)
    res.ranking          # ranking.csv

An algorithm in Python is a class with a ``name`` and the methods ``start``, ``expired``,
``completed`` and ``rto`` (optional: ``failed``, ``reset``, ``snapshot``), called once per
event by the simulator (docs/suite.md, "Algorithms written in Python"). A file given to
``cc_from`` lists its classes in ``ALGORITHMS``.
"""

from __future__ import annotations

import importlib.util as _importlib_util
import os as _os
import sys as _sys
from dataclasses import dataclass as _dataclass
from pathlib import Path as _Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import pandas as _pd

from . import _native

PathLike = Union[str, "_os.PathLike[str]"]


@_dataclass
class SuiteResults:
    """A suite's results directory, scored: the files ``coaplab suite run`` writes."""

    path: _Path
    """The suite's results directory."""
    leaderboard: _pd.DataFrame
    """leaderboard.csv: per experiment x algorithm its score and rank."""
    ranking: _pd.DataFrame
    """ranking.csv: per algorithm, best first, its mean normalised rank and wins."""
    table: str = ""
    """The table ``coaplab suite run`` prints."""
    failed: int = 0
    """Runs that failed (in this invocation, or in the merged shards)."""


def register(cls: type) -> str:
    """Registers the algorithm class ``cls`` under ``cls.name`` for this process: scenarios,
    :func:`coaplab.run`, :func:`coaplab.trace` and :func:`suite_run` then accept the name.
    Registering a name again replaces the class; a built-in name raises
    :class:`coaplab.AlgorithmNameTaken`. Returns the name."""
    return _native.register_algorithm(cls)


def _module_of(path: PathLike, source: Optional[str] = None):
    """The Python file ``path`` executed as a module (``source``: its text, when the file is
    not readable here, as on a Dask worker)."""
    path = _os.fspath(path)
    name = "coaplab_user_" + "".join(c if c.isalnum() else "_" for c in _Path(path).stem)
    if source is None:
        spec = _importlib_util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise _native.CoaplabError(f"--cc-from {path}: not a Python file")
        module = _importlib_util.module_from_spec(spec)
        _sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    import types

    module = types.ModuleType(name)
    module.__file__ = path
    _sys.modules[name] = module
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def load(path: PathLike, source: Optional[str] = None) -> list:
    """Runs the Python file ``path`` and registers the algorithm classes of its
    ``ALGORITHMS`` list (:func:`register`); returns their names."""
    if not _os.fspath(path).endswith(".py"):
        raise _native.CoaplabError(f"--cc-from {_os.fspath(path)}: not a Python file (.py)")
    if source is None and not _os.path.isfile(path):
        raise _native.CoaplabError(f"--cc-from {_os.fspath(path)}: no such file")
    module = _module_of(path, source)
    classes = getattr(module, "ALGORITHMS", None)
    if not classes:
        raise _native.CoaplabError(
            f"--cc-from {_os.fspath(path)}: the file names no algorithm; list its classes in "
            "ALGORITHMS = [MyRto, ...]"
        )
    return [register(cls) for cls in classes]


def _algorithms(cc: Optional[Sequence[str]], loaded: Sequence[str]) -> list:
    """The algorithms of a run: ``cc`` (default: every built-in one), then the loaded ones."""
    out: list = []
    for name in list(cc) if cc else _native.builtin_algorithms():
        if name not in out:
            out.append(name)
    for name in loaded:
        if name not in out:
            out.append(name)
    return out


def read_suite(path: PathLike, table: str = "", failed: int = 0) -> SuiteResults:
    """Reads a scored suite directory (of ``coaplab suite run`` or :func:`suite_run`)."""
    path = _Path(path)
    return SuiteResults(
        path=path,
        leaderboard=_pd.read_csv(path / "leaderboard.csv"),
        ranking=_pd.read_csv(path / "ranking.csv"),
        table=table,
        failed=failed,
    )


def _default_out(suite: PathLike, algorithms: list) -> _Path:
    from . import _default_out as default_out

    name, _ = _native.suite_plan(_os.fspath(suite), algorithms)
    return default_out(f"suite-{name}")


def suite_run(
    suite: PathLike = "suites/standard.toml",
    *,
    cc: Optional[Sequence[str]] = None,
    cc_from: Iterable[PathLike] = (),
    out: Optional[PathLike] = None,
    jobs: Optional[int] = None,
    shard: Optional[str] = None,
    log: Optional[Callable[[str], Any]] = None,
) -> Optional[SuiteResults]:
    """Runs ``suite`` for the algorithms ``cc`` (default: every built-in one) and those of the
    Python files ``cc_from``, as ``coaplab suite run``: finished cells are skipped, a cell cut
    short resumes, ``shard`` ("K/N") runs one shard of every cell. ``log`` gets each progress
    line. Returns the scored results, or None for a shard (merge the shards with
    :func:`suite_merge`)."""
    loaded = [name for path in cc_from for name in load(path)]
    algorithms = _algorithms(cc, loaded)
    out = _Path(out) if out is not None else _default_out(suite, algorithms)
    jobs = jobs or _os.cpu_count() or 1
    _cells, _skipped, failed = _native.suite_run(_os.fspath(suite), algorithms, _os.fspath(out), jobs, shard, log)
    if shard is not None:
        return None
    table = _native.suite_scores(_os.fspath(out))
    return read_suite(out, table, failed)


def suite_merge(out: PathLike, dirs: Iterable[PathLike]) -> SuiteResults:
    """Joins the directories of the shards of one suite run into ``out`` and scores it, as
    ``coaplab suite merge --out OUT DIR...``."""
    _total, failed = _native.suite_merge(_os.fspath(out), [_os.fspath(d) for d in dirs])
    table = _native.suite_scores(_os.fspath(out))
    return read_suite(out, table, failed)


def suite_plan(suite: PathLike = "suites/standard.toml", *, cc: Optional[Sequence[str]] = None, cc_from: Iterable[PathLike] = ()) -> str:
    """Checks the suite and every experiment x algorithm; returns what ``coaplab suite run
    --dry-run`` prints."""
    loaded = [name for path in cc_from for name in load(path)]
    return _native.suite_plan(_os.fspath(suite), _algorithms(cc, loaded))[1]

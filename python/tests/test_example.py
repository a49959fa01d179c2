"""examples/fasor_fct_boxplot.py runs and saves its figure (2 replications; skipped without
matplotlib, which the test venv of scripts/test.sh does not install)."""

import runpy
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fasor_fct_boxplot.py"


def test_the_fasor_figure_example_runs(tmp_path, monkeypatch):
    png = tmp_path / "fig.png"
    monkeypatch.setattr(sys, "argv", [str(EXAMPLE), "--reps", "2", "--out", str(tmp_path / "r"), "--png", str(png)])
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    assert png.stat().st_size > 10_000

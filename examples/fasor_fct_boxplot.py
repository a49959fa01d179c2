# %% [markdown]
# # FASOR (Globecom 2018): flow completion times of 200 clients, two buffer sizes
#
# Reproduces the error-free box plot of Järvinen, Raitahila, Cao and Kojo, "FASOR Retransmission
# Timeout and Congestion Control Mechanism for CoAP", IEEE Globecom 2018: 200 CoAP clients share
# an NB-IoT-like link, each doing 50 back-to-back exchanges ("continuous" workload), under Default
# CoAP, CoCoA, CoCoA with Full Backoff 1 and FASOR, with a one-BDP buffer (2,500 B) and a
# bufferbloated one (28,200 B). Scenario: the paper's matrix, `scenarios/fasor-globecom18.toml`,
# cut to that slice with overrides, as `coaplab run FILE --set KEY=VALUE` would.
#
# A notebook in the percent format (`# %%` cells: VS Code, Jupyter with jupytext, or plain
# `python examples/fasor_fct_boxplot.py`). Needs `pip install ./python matplotlib`. With 20
# replications (the paper's) it simulates 160 runs: 15 s of CPU time even in a debug build of
# the package; `--reps 2` for a quick look. Tested by python/tests/test_example.py (2
# replications) where matplotlib is installed.

# %%
import argparse
from pathlib import Path

import coaplab

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--reps", type=int, default=20, help="replications per cell (the paper: 20)")
parser.add_argument("--out", default="results/fasor-fig", help="results directory (resumed if it exists)")
parser.add_argument("--png", default="fasor-fct-boxplot.png", help="where to save the figure")
args, _ = parser.parse_known_args()

root = Path(__file__).resolve().parent.parent
res = coaplab.run(
    root / "scenarios" / "fasor-globecom18.toml",
    out=args.out,
    reps=args.reps,
    resume=Path(args.out, "manifest.json").exists(),
    network__buffer_bytes=[2500, 28200],
    flows__0__count=200,
    flows__0__workload="continuous",
    flows__0__cc=["default", "cocoa", "cocoa-fb1", "fasor"],
)
print(f"{res.total} runs, {res.failed} failed; results in {res.path}")

# %% [markdown]
# `res.flows` is `flows.csv` as a DataFrame: one row per flow, `fct_s` its completion time.
# The paper pools the flows of all replications per cell, as `res.summary` (`summary.csv`) does.

# %%
flows = res.flows[res.flows["completed"]]
quartiles = flows.groupby(["buffer_bytes", "cc"])["fct_s"].quantile([0.25, 0.5, 0.75]).unstack()
print(quartiles.round(1).to_string())

# %%
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

order = ["default", "cocoa", "cocoa-fb1", "fasor"]
fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
for ax, (buffer, cell) in zip(axes, flows.groupby("buffer_bytes")):
    data = [cell.loc[cell["cc"] == cc, "fct_s"] for cc in order]
    ax.boxplot(data, whis=(0, 100))
    ax.set_xticks(range(1, len(order) + 1), order)
    ax.set_title(f"buffer {buffer:,} B")
    ax.grid(axis="y", alpha=0.3)
axes[0].set_ylabel("flow completion time (s)")
fig.suptitle(f"200 clients, NB-IoT-like link, continuous workload, {args.reps} replications")
fig.tight_layout()
fig.savefig(args.png, dpi=120)
print(f"figure saved to {args.png}")

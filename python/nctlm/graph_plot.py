"""Time by op type of op-graph runs as stacked bars (docs/models.md).

usage: python3 -m nctlm.graph_plot STATS.json [STATS.json ...] -o FILE.png [--title TEXT]

Each stats JSON (nctlm run -t graph ... --stats-json, or nctlm model ... --run --plot) is one bar:
its step's latency split by op type (the critical core's time in each op, summed over the ops of
that type), labelled with the graph, the platform and tokens/s. Debian's python3-matplotlib.
"""

import argparse
import json
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    r = doc.get("results")
    if not r or "time_by_op_type_ns" not in r:
        raise ValueError(f"{path}: not the stats of a graph run (nctlm run -t graph --stats-json)")
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m nctlm.graph_plot", description=__doc__.split("\n")[0])
    ap.add_argument("stats", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--title")
    a = ap.parse_args(argv)
    try:
        runs = [load(p) for p in a.stats]
    except (OSError, ValueError) as e:
        print(f"nctlm.graph_plot: {e}", file=sys.stderr)
        return 2
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = []
    for r in runs:
        for k, v in sorted(r["time_by_op_type_ns"].items(), key=lambda kv: -kv[1]):
            if k not in kinds:
                kinds.append(k)
    colors = plt.get_cmap("tab20").colors
    fig, ax = plt.subplots(figsize=(11, 1.6 + 0.7 * len(runs)))
    labels = []
    for i, r in enumerate(runs):
        left = 0.0
        for j, k in enumerate(kinds):
            us = r["time_by_op_type_ns"].get(k, 0.0) / 1e3
            if us <= 0:
                continue
            ax.barh(i, us, left=left, color=colors[j % len(colors)], label=k, edgecolor="white", linewidth=0.5)
            if us / (r["latency_ns"] / 1e3) > 0.06:
                ax.text(left + us / 2, i, f"{k}\n{100 * us * 1e3 / r['latency_ns']:.0f}%", ha="center", va="center",
                        fontsize=7)
            left += us
        tps = f", {r['tokens_per_s']:.0f} tok/s" if "tokens_per_s" in r else ""
        labels.append(f"{r['graph']}\n{r['platform']}: {r['latency_ns'] / 1e3:.1f} us{tps}")
    ax.set_yticks(range(len(runs)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time of the step (us), by op type")
    handles, names = ax.get_legend_handles_labels()
    seen = {}
    for h, n in zip(handles, names):
        seen.setdefault(n, h)
    ax.legend(seen.values(), seen.keys(), fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_title(a.title or "time by op type", fontsize=10)
    fig.tight_layout()
    fig.savefig(a.output, dpi=130)
    return 0


if __name__ == "__main__":
    sys.exit(main())

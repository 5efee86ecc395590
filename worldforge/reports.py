"""Plots people would rather look at than read, rendered to PNG with matplotlib (Agg).

* :func:`mask_statistics_png` — the four loss-mask statistics per domain (box plots);
* :func:`informative_share_png` — the share of informative turns per source (bars).

Both take the ``turns`` frame joined with ``domain``/``source`` and return PNG bytes.
"""

from __future__ import annotations

import io

import polars as pl

STATISTICS = ("obs_tokens", "compression_ratio", "novelty", "line_surprisal")


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    _figure().close(fig)
    return buf.getvalue()


def mask_statistics_png(turns: pl.DataFrame) -> bytes:
    """Box plots of each statistic by domain (``obs_tokens`` on a log scale)."""
    plt = _figure()
    domains = sorted(turns["domain"].unique().to_list())
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    for ax, stat in zip(axes, STATISTICS):
        data = [turns.filter(pl.col("domain") == d)[stat].drop_nulls().to_list() for d in domains]
        ax.boxplot(data, tick_labels=domains, showfliers=False)
        ax.set_title(stat)
        ax.tick_params(axis="x", labelrotation=45)
        if stat == "obs_tokens":
            ax.set_yscale("symlog")
    fig.suptitle("Loss-mask statistics per domain")
    return _png(fig)


def informative_share_png(turns: pl.DataFrame) -> bytes:
    """Share of informative turns per source, with the number of turns on each bar."""
    plt = _figure()
    by = turns.group_by("source").agg(pl.col("informative").mean().alias("share"), pl.len().alias("n")).sort("source")
    fig, ax = plt.subplots(figsize=(7, 3.2))
    bars = ax.bar(by["source"].to_list(), by["share"].to_list(), color="#4c72b0")
    for bar, n in zip(bars, by["n"].to_list()):
        ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height() + 0.01, f"{n} turns", ha="center", fontsize=8)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("informative share")
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_title("Informative turns per source")
    return _png(fig)

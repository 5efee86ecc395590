"""Plots people would rather look at than read, rendered to PNG with matplotlib (Agg).

* :func:`mask_statistics_png` — the four loss-mask statistics per domain (box plots);
* :func:`informative_share_png` — the share of informative turns per source (bars);
* :func:`acceptance_png` — SFT rejection-sampling acceptance per domain and per verifier (bars).

The first two take the ``turns`` frame joined with ``domain``/``source``; all return PNG bytes.
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


def acceptance_png(by_domain: dict[str, dict], by_verifier: dict[str, dict]) -> bytes:
    """Acceptance rate per domain (targets on each bar) and pass rate per rule verifier.

    Args:
        by_domain: ``{domain: {"targets", "accepted", "rate"}}`` (an SFT build report's ``acceptance_by_domain``).
        by_verifier: ``{verifier: {"scored", "passed", "rate" or None}}``.
    """
    plt = _figure()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.4))
    domains = list(by_domain)
    bars = left.bar(domains, [by_domain[d]["rate"] for d in domains], color="#55a868")
    for bar, d in zip(bars, domains):
        left.text(bar.get_x() + bar.get_width() / 2, bar.get_height() + 0.01, f"{by_domain[d]['targets']}", ha="center", fontsize=8)
    left.set_ylim(0, 1.1)
    left.set_title("SFT acceptance per domain (targets on bars)")
    names = list(by_verifier)
    rates = [by_verifier[v]["rate"] or 0.0 for v in names]
    right.bar(names, rates, color="#c44e52")
    for i, v in enumerate(names):
        if by_verifier[v]["rate"] is None:
            right.text(i, 0.02, "n/a", ha="center", fontsize=8)
    right.set_ylim(0, 1.1)
    right.set_title("Candidates passing each verifier")
    for ax in (left, right):
        ax.tick_params(axis="x", labelrotation=30)
    return _png(fig)

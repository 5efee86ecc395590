"""Reciprocal-rank fusion of ranked lists (hybrid search).

Cormack, Clarke and Büttcher (SIGIR 2009), "Reciprocal Rank Fusion outperforms Condorcet and individual Rank
Learning Methods": a document's fused score is the sum over the lists that hold it of ``1 / (k + rank)`` (rank
1-based), with ``k = 60``. Scores of different retrievers (BM25's unbounded sums, cosine similarities) never have to
be put on one scale; only ranks are read.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

__all__ = ["RRF_K", "reciprocal_rank_fusion"]

RRF_K = 60
"""The fusion's constant ``k`` (the paper's value, also Elasticsearch's and OpenSearch's default)."""


def reciprocal_rank_fusion(rankings: Sequence[Sequence[Hashable]], k: int = RRF_K, limit: int | None = None) -> list[tuple[Hashable, float]]:
    """Fuse ranked lists of document ids into one: ``[(id, fused score), ...]``, best first.

    Ties are broken by the best rank the document reached in any list, then by the order of ``rankings`` (the first
    list's order wins), so the result is deterministic. A document repeated within one list counts once, at its best
    rank.

    Args:
        rankings: one list of ids per retriever, best first.
        k: the constant added to each rank (:data:`RRF_K`).
        limit: keep this many (``None``: all).
    """
    score: dict[Hashable, float] = {}
    best: dict[Hashable, tuple[int, int]] = {}
    for li, ranking in enumerate(rankings):
        seen = set()
        for rank, doc in enumerate(ranking, start=1):
            if doc in seen:
                continue
            seen.add(doc)
            score[doc] = score.get(doc, 0.0) + 1.0 / (k + rank)
            best[doc] = min(best.get(doc, (rank, li)), (rank, li))
    fused = sorted(score, key=lambda d: (-score[d], best[d]))
    return [(d, score[d]) for d in (fused if limit is None else fused[:limit])]

"""Turn-level loss-mask statistics and the mask decision (DESIGN.md §5).

The Qwen-AgentWorld paper masks the loss of turns whose observations carry little
information, judged by four surface-level statistics. Our definition, per (action,
observation) turn, over the observation text:

1. ``obs_tokens`` — length in tokens (whitespace tokens unless a tokenizer is given).
2. ``compression_ratio`` — zlib-compressed bytes / UTF-8 bytes; low = repetitive output.
3. ``novelty`` — share of the observation's word 3-grams not seen earlier in the same
   trajectory (earlier actions and observations, this turn's action, and earlier in this
   observation); low = echoed or repeated context.
4. ``line_surprisal`` — mean over the observation's non-empty lines of
   −log2(df(line) / N), where df is the number of trajectories of the corpus containing the
   line (lines compared with runs of whitespace collapsed) and N the number of trajectories
   that have turns; low = boilerplate shared by many trajectories.

A turn is *not informative* when a statistic is at or below its domain's threshold. A
threshold is the corpus quantile ``quantile`` of that statistic among the domain's
non-empty turns (so the least informative tail of each domain is masked, ties included:
FireAct's ``Episode finished, reward = True`` lines, shared by half the corpus, are the
10% quantile of the search domain), capped at ``caps[statistic]`` so that a domain whose
turns are mostly fine does not mask its ordinary ones; ``overrides[domain][statistic]``
replaces it. ``mask_reason`` names the
statistic that decided: ``empty``, ``novelty``, ``line_surprisal``, ``compression_ratio``,
``obs_tokens`` (checked in this order) or ``pass`` for informative turns.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import polars as pl

STATISTICS = ("obs_tokens", "compression_ratio", "novelty", "line_surprisal")
DECISION_ORDER = ("novelty", "line_surprisal", "compression_ratio", "obs_tokens")



@dataclass(frozen=True)
class MaskConfig:
    """Thresholds of the mask decision.

    Attributes:
        quantile: the corpus quantile (0–1) of each statistic, per domain, at or below
            which a turn is not informative.
        caps: upper bounds on the quantile thresholds, per statistic.
        overrides: ``{domain: {statistic: threshold}}``, replacing computed thresholds.
    """

    quantile: float = 0.10
    caps: dict[str, float] = field(
        default_factory=lambda: {"obs_tokens": 1.0, "compression_ratio": 0.2, "novelty": 0.3, "line_surprisal": 2.0}
    )
    overrides: dict[str, dict[str, float]] = field(default_factory=dict)


def compression_ratio(text: str) -> float:
    """zlib-compressed size / UTF-8 size (0.0 for empty text)."""
    raw = text.encode("utf-8")
    return len(zlib.compress(raw, 6)) / len(raw) if raw else 0.0


def _grams(words: list[str]) -> list[tuple[str, ...]]:
    if len(words) < 3:
        return [tuple(words)] if words else []
    return list(zip(words, words[1:], words[2:]))


def novelty_series(actions: list[str], observations: list[str]) -> list[float]:
    """Novelty of each observation of one trajectory, in turn order.

    A 3-gram counts as novel at its first occurrence in the trajectory only, so a gram
    repeated inside one observation is novel once.
    """
    seen: set[tuple[str, ...]] = set()
    out = []
    for action, obs in zip(actions, observations):
        seen.update(_grams(action.lower().split()))
        grams = _grams(obs.lower().split())
        before = len(seen)
        seen.update(grams)
        out.append((len(seen) - before) / len(grams) if grams else 0.0)
    return out


def _line_surprisal(df: pl.DataFrame) -> pl.DataFrame:
    """``(trajectory_id, turn_idx, line_surprisal)`` for turns with at least one line."""
    n_traj = max(df["trajectory_id"].n_unique(), 1)
    lines = (
        df.lazy()
        .select("trajectory_id", "turn_idx", pl.col("observation").str.split("\n").alias("line"))
        .explode("line")
        .with_columns(pl.col("line").str.replace_all(r"\s+", " ").str.strip_chars(" "))
        .filter(pl.col("line") != "")
    )
    dfreq = lines.select("trajectory_id", "line").unique().group_by("line").len("df")
    return (
        lines.join(dfreq, on="line", how="left")
        .with_columns((-(pl.col("df") / n_traj).log(base=2)).alias("s"))
        .group_by("trajectory_id", "turn_idx")
        .agg(pl.col("s").mean().alias("line_surprisal"))
        .collect()
    )


_GOLDEN = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9)


def _gram_key(n: pl.Expr) -> pl.Expr:
    """The 64-bit key of the word gram starting at each row of column ``h`` (word hashes in text
    order) of a text of ``n`` words: a 3-gram, or the whole text when it has fewer than three
    words; the words' hashes mixed by position, plus the gram's length."""
    h, h1, h2 = pl.col("h"), pl.col("h").shift(-1), pl.col("h").shift(-2)
    return (pl.when(n >= 3).then(h * _GOLDEN[0] + h1 * _GOLDEN[1] + h2 * _GOLDEN[2] + 3)
            .when(n == 2).then(h * _GOLDEN[0] + h1 * _GOLDEN[1] + 2)
            .otherwise(h * _GOLDEN[0] + 1))


def _novelty_frame(df: pl.DataFrame) -> pl.DataFrame:
    """``(novelty, obs_tokens)`` per row of ``df`` (sorted by trajectory and turn), computed in polars.

    The same definition as :func:`novelty_series`, vectorized: the action's and then the
    observation's lower-cased whitespace words of every turn are exploded in trajectory order,
    each word 3-gram (or the whole text when it has fewer than three words) becomes a 64-bit key
    (the words' hashes mixed by position, plus the gram's length, mixed with the trajectory), and a
    gram is new at the first occurrence of its key (``is_first_distinct``). Novelty = new observation grams /
    observation grams; ``obs_tokens`` = the observation's word count. Two different grams share a
    key with probability about n²/2⁶⁵ (n grams in all): negligible, and
    ``bench/turns.py`` cross-checks every value against the plain definition.
    """
    base = df.lazy().select(
        pl.col("trajectory_id").rank("dense").cast(pl.UInt64).alias("tid"),
        pl.int_range(pl.len(), dtype=pl.UInt32).alias("r"), "action", "observation",
    )
    parts = pl.concat([
        base.select("tid", "r", pl.lit(0, pl.UInt8).alias("part"), pl.col("action").alias("text")),
        base.select("tid", "r", pl.lit(1, pl.UInt8).alias("part"), pl.col("observation").alias("text")),
    ]).sort("r", "part").select("tid", "r", "part", pl.col("text").str.to_lowercase().str.extract_all(r"\S+").alias("w"))
    parts = parts.with_columns(pl.col("w").list.len().cast(pl.Int64).alias("n"))
    key = _gram_key(pl.col("n"))
    grams = (
        parts.filter(pl.col("n") > 0)
        .with_columns(pl.int_ranges(0, pl.col("n")).alias("pos"))
        .explode("w", "pos")
        .with_columns(pl.col("w").hash(7).alias("h"))
        .with_columns(key.alias("g"))
        .filter(pl.when(pl.col("n") >= 3).then(pl.col("pos") <= pl.col("n") - 3).otherwise(pl.col("pos") == 0))
        .with_columns((pl.col("g") ^ (pl.col("tid") * 0xD6E8FEB86659FD93)).is_first_distinct().alias("new"))
    )
    novelty = grams.filter(pl.col("part") == 1).group_by("r").agg((pl.col("new").sum() / pl.len()).alias("novelty"))
    tokens = parts.filter(pl.col("part") == 1).select("r", pl.col("n").alias("obs_tokens"))
    return (base.select("r").join(novelty, on="r", how="left").join(tokens, on="r", how="left").sort("r")
            .select(pl.col("novelty").fill_null(0.0), pl.col("obs_tokens").fill_null(0)).collect())


LARGE_TRAJECTORY = 1 << 20
"""Characters of text (actions and observations) above which a trajectory's novelty is computed by
:func:`_novelty_chunked`, whose memory is 8 bytes a word rather than a frame row a word."""

# Unicode White_Space: the characters Rust regex's ``\s`` (polars' ``extract_all(r"\S+")``) matches
_WS_CHAR = re.compile("[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def _word_hashes(text: str, chunk: int) -> pl.Series:
    """64-bit hashes of the lower-cased whitespace words of ``text``, in order, computed ``chunk``
    characters at a time (each piece ends at a white-space character, so no word is cut)."""
    parts, start, n = [], 0, len(text)
    while start < n:
        end = min(start + chunk, n)
        if end < n:
            m = _WS_CHAR.search(text, end)
            end = m.start() if m else n
        words = pl.Series([text[start:end]]).str.to_lowercase().str.extract_all(r"\S+").explode().drop_nulls()
        parts.append(words.hash(7))
        start = end
    return pl.concat(parts) if parts else pl.Series(dtype=pl.UInt64)


def _gram_keys(h: pl.Series) -> pl.Series:
    """The keys (:func:`_gram_key`) of the grams of one text given its word hashes."""
    n = h.len()
    return pl.DataFrame({"h": h}).select(_gram_key(pl.lit(n)).alias("g")).head(max(n - 2, 1))["g"]


def _novelty_chunked(actions: list[str], observations: list[str], chunk: int = LARGE_TRAJECTORY) -> tuple[list[float], list[int]]:
    """``(novelty, obs_tokens)`` of each turn of one trajectory, as :func:`novelty_series` defines
    them, with memory of 8 bytes a word (plus one ``chunk`` of text) instead of a frame row a word:
    every gram's 64-bit key in trajectory order, and a gram is new at its key's first occurrence."""
    keys, spans, tokens = [], [], []
    at = 0
    for action, obs in zip(actions, observations):
        a = _gram_keys(_word_hashes(action, chunk))
        h = _word_hashes(obs, chunk)
        o = _gram_keys(h)
        keys += [a, o]
        at += a.len()
        spans.append((at, o.len()))
        at += o.len()
        tokens.append(h.len())
    if not keys:
        return [], []
    new = pl.concat(keys).is_first_distinct()
    return [new.slice(start, n).sum() / n if n else 0.0 for start, n in spans], tokens


def _local_novelty(df: pl.DataFrame) -> pl.DataFrame:
    """``(novelty, obs_tokens)`` per row of ``df`` (sorted by trajectory and turn): trajectories
    with more than :data:`LARGE_TRAJECTORY` characters by :func:`_novelty_chunked`, the rest at once
    by :func:`_novelty_frame`."""
    sizes = df.group_by("trajectory_id").agg((pl.col("action").str.len_chars().sum() + pl.col("observation").str.len_chars().sum()).alias("n"))
    large = sizes.filter(pl.col("n") > LARGE_TRAJECTORY)["trajectory_id"]
    if large.is_empty():
        return _novelty_frame(df)
    rows = df.with_row_index("row")
    is_large = pl.col("trajectory_id").is_in(large.implode())
    small = rows.filter(~is_large)
    parts = [small.select("row").with_columns(_novelty_frame(small.drop("row")))] if small.height else []
    for tid in large.to_list():
        turns = rows.filter(pl.col("trajectory_id") == tid)
        novelty, tokens = _novelty_chunked(turns["action"].to_list(), turns["observation"].to_list())
        parts.append(pl.DataFrame({"row": turns["row"], "novelty": pl.Series(novelty, dtype=pl.Float64),
                                   "obs_tokens": pl.Series(tokens, dtype=pl.Int64)}))
    return pl.concat([p.with_columns(pl.col("novelty").cast(pl.Float64), pl.col("obs_tokens").cast(pl.Int64)) for p in parts]).sort("row").drop("row")


def _compression_ratios(texts: list[str]) -> list[float]:
    """:func:`compression_ratio` of each text, each distinct text compressed once (observations
    repeat: about half of the real corpus's are duplicates)."""
    done: dict[str, float] = {}
    out = []
    for t in texts:
        r = done.get(t)
        if r is None:
            r = done[t] = compression_ratio(t)
        out.append(r)
    return out


def compute_local_statistics(turns: pl.DataFrame, tokenize: Callable[[str], int] | None = None) -> pl.DataFrame:
    """Add the statistics that depend on the turn's own trajectory only: ``obs_tokens``,
    ``compression_ratio`` and ``novelty`` (``turns`` must hold whole trajectories).

    Novelty runs in polars (outside the GIL, :func:`_novelty_frame`) on a worker thread while this
    thread runs zlib, once per distinct observation.

    Args:
        turns: frame with ``trajectory_id, turn_idx, action, observation`` (any order).
        tokenize: counts tokens of a text; whitespace tokens when None.

    Returns:
        The frame sorted by ``trajectory_id, turn_idx`` with ``obs_tokens`` (Int64),
        ``compression_ratio`` and ``novelty`` (Float64) added.
    """
    df = turns.sort("trajectory_id", "turn_idx")
    with ThreadPoolExecutor(1) as pool:
        novelty_job = pool.submit(_local_novelty, df)
        obs = df["observation"].to_list()
        ratios = _compression_ratios(obs)
        tokens = [tokenize(o) for o in obs] if tokenize else None
        local = novelty_job.result()
    return df.with_columns(
        pl.Series("obs_tokens", tokens, dtype=pl.Int64) if tokens is not None else local["obs_tokens"].cast(pl.Int64),
        pl.Series("compression_ratio", ratios, dtype=pl.Float64),
        local["novelty"].cast(pl.Float64),
    )


def compute_statistics(turns: pl.DataFrame, tokenize: Callable[[str], int] | None = None) -> pl.DataFrame:
    """Add the four statistics to a turns frame.

    Line surprisal (document frequencies in polars, outside the GIL) runs on a worker thread while
    :func:`compute_local_statistics` runs, so the work spreads over two cores.

    Args:
        turns: frame with ``trajectory_id, turn_idx, action, observation`` (any order).
        tokenize: counts tokens of a text; whitespace tokens when None.

    Returns:
        The frame with ``obs_tokens`` (Int64), ``compression_ratio``, ``novelty`` and
        ``line_surprisal`` (Float64) added, sorted by ``trajectory_id, turn_idx``.
    """
    df = turns.sort("trajectory_id", "turn_idx")
    with ThreadPoolExecutor(1) as pool:
        surprisal_job = pool.submit(_line_surprisal, df)
        out = compute_local_statistics(df, tokenize)
        surprisal = surprisal_job.result()
    out = out.join(surprisal, on=["trajectory_id", "turn_idx"], how="left", maintain_order="left")
    return out.with_columns(pl.col("line_surprisal").fill_null(0.0).clip(lower_bound=0.0) + 0.0)


def thresholds(stats: pl.DataFrame, config: MaskConfig = MaskConfig()) -> pl.DataFrame:
    """Per-domain thresholds of each statistic.

    Args:
        stats: turns with ``domain`` and the four statistics.

    Returns:
        Frame ``(domain, statistic, threshold, source)`` where source is ``quantile``,
        ``cap`` or ``override``.
    """
    rows = []
    for domain in sorted(stats["domain"].unique().to_list()):
        nonempty = stats.filter((pl.col("domain") == domain) & (pl.col("obs_tokens") > 0))
        for stat in STATISTICS:
            override = config.overrides.get(domain, {}).get(stat)
            if override is not None:
                rows.append((domain, stat, float(override), "override"))
                continue
            q = nonempty[stat].quantile(config.quantile, "lower") if nonempty.height else 0.0
            q = 0.0 if q is None or math.isnan(q) else float(q)
            cap = config.caps.get(stat, math.inf)
            rows.append((domain, stat, min(q, cap), "cap" if cap < q else "quantile"))
    return pl.DataFrame(rows, schema={"domain": pl.String, "statistic": pl.String, "threshold": pl.Float64, "source": pl.String}, orient="row")


def decide(stats: pl.DataFrame, limits: pl.DataFrame) -> pl.DataFrame:
    """Add ``informative`` (Boolean) and ``mask_reason`` (String) to turns with statistics."""
    wide = limits.pivot(on="statistic", index="domain", values="threshold").rename({s: f"_t_{s}" for s in STATISTICS})
    df = stats.join(wide, on="domain", how="left", maintain_order="left")
    reason = pl.when(pl.col("obs_tokens") == 0).then(pl.lit("empty"))
    for stat in DECISION_ORDER:
        reason = reason.when(pl.col(stat) <= pl.col(f"_t_{stat}")).then(pl.lit(stat))
    reason = reason.otherwise(pl.lit("pass"))
    return df.with_columns(reason.alias("mask_reason")).with_columns(
        (pl.col("mask_reason") == "pass").alias("informative")
    ).drop([f"_t_{s}" for s in STATISTICS])


def mask_turns(turns: pl.DataFrame, config: MaskConfig = MaskConfig(), tokenize: Callable[[str], int] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Statistics, thresholds and the mask decision in one call.

    Args:
        turns: ``trajectory_id, turn_idx, domain, action, observation``.

    Returns:
        ``(turns with statistics, informative, mask_reason; thresholds frame)``.
    """
    stats = compute_statistics(turns, tokenize)
    limits = thresholds(stats, config)
    return decide(stats, limits), limits

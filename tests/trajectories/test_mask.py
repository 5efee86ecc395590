import math

import polars as pl
import pytest

from worldforge.trajectories.mask import MaskConfig, compression_ratio, compute_statistics, mask_turns, novelty_series


def frame(rows):
    return pl.DataFrame(rows, schema=["trajectory_id", "turn_idx", "domain", "action", "observation"], orient="row")


def test_compression_ratio_is_low_for_repetitive_text():
    varied = "The quick brown fox jumps over the lazy dog while 42 zebras sing opera in Lisbon."
    assert compression_ratio("ok ok " * 200) < 0.05 < compression_ratio(varied)
    assert compression_ratio("") == 0.0


def test_novelty_counts_unseen_trigrams():
    # turn 1: all new; turn 2 echoes turn 1's output; turn 3 half new
    obs = ["a b c d", "a b c d", "b c d e"]
    assert novelty_series(["ls", "ls", "ls"], obs) == [1.0, 0.0, 0.5]
    # the action itself counts as seen context (an echoed command is not novel)
    assert novelty_series(["echo x y z"], ["echo x y z"]) == [0.0]
    # repetition inside one observation is not novel either
    assert novelty_series(["run"], ["x y z x y z"]) == [0.75]


def test_line_surprisal_uses_document_frequency_across_trajectories():
    rows = [(f"t{i}", 0, "terminal", "cmd", "shared banner\nunique line %d" % i) for i in range(4)]
    stats = compute_statistics(frame(rows))
    # "shared banner" in 4/4 trajectories -> 0 bits; each unique line in 1/4 -> 2 bits; mean 1.0
    assert stats["line_surprisal"].to_list() == pytest.approx([1.0] * 4)
    assert stats["obs_tokens"].to_list() == [5, 5, 5, 5]


def test_a_configured_tokenizer_counts_obs_tokens():
    stats = compute_statistics(frame([("t", 0, "tool", "call", "ab cd"), ("t", 1, "tool", "call", "xyz")]), tokenize=len)
    assert stats.sort("turn_idx")["obs_tokens"].to_list() == [5, 3]  # characters, not whitespace tokens


def test_empty_observation_statistics():
    stats = compute_statistics(frame([("t", 0, "tool", "call", "")]))
    row = stats.row(0, named=True)
    assert (row["obs_tokens"], row["compression_ratio"], row["novelty"], row["line_surprisal"]) == (0, 0.0, 0.0, 0.0)


def corpus():
    rows = []
    for i in range(40):
        rows.append((f"t{i}", 0, "search", "search[q]", f"Result {i}: a distinct paragraph about topic number {i} with facts {i * 7}"))
        rows.append((f"t{i}", 1, "search", "finish[x]", "Episode finished, reward = True"))
        rows.append((f"t{i}", 2, "search", "search[q]", ""))
    return frame(rows)


def test_mask_decision_names_the_statistic():
    masked, limits = mask_turns(corpus())
    reasons = dict(zip(masked["turn_idx"].to_list(), masked["mask_reason"].to_list()))
    assert reasons[2] == "empty"
    assert reasons[1] == "line_surprisal"  # the same line in every trajectory: boilerplate
    assert reasons[0] == "pass"
    assert masked.filter(pl.col("turn_idx") == 0)["informative"].all()
    assert not masked.filter(pl.col("turn_idx") > 0)["informative"].any()
    assert set(limits["statistic"]) == {"obs_tokens", "compression_ratio", "novelty", "line_surprisal"}


def test_overrides_and_caps():
    masked, limits = mask_turns(corpus(), MaskConfig(overrides={"search": {"obs_tokens": 20}}))
    row = limits.filter((pl.col("domain") == "search") & (pl.col("statistic") == "obs_tokens")).row(0, named=True)
    assert (row["threshold"], row["source"]) == (20.0, "override")
    assert set(masked.filter(pl.col("turn_idx") == 0)["mask_reason"]) == {"obs_tokens"}
    # default: the obs_tokens quantile (5 tokens) is capped at 1 token
    default = mask_turns(corpus())[1]
    tok = default.filter(pl.col("statistic") == "obs_tokens").row(0, named=True)
    assert (tok["threshold"], tok["source"]) == (1.0, "cap")
    lifted = mask_turns(corpus(), MaskConfig(caps={"obs_tokens": math.inf}))[1]
    assert lifted.filter(pl.col("statistic") == "obs_tokens")["threshold"].to_list() == [5.0]


def test_large_trajectories_get_the_same_novelty_chunked(monkeypatch):
    """Issue 33: a trajectory over LARGE_TRAJECTORY characters is computed 8 bytes a word; the
    values equal the definition, including grams across chunk ends and across turns."""
    import random

    from worldforge.trajectories import mask

    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(40)] + ["Ünïcode", "ΣΟΦΟΣ", "x\u3000y"]

    def text(n):
        return " ".join(rng.choice(vocab) for _ in range(n)).replace(" w1 ", "\nw1\t")
    actions = ["search " + text(3), "", text(2), text(1)]
    observations = [text(300), text(2), "", text(500) + " " + text(1)]
    expect = novelty_series(actions, observations)
    novelty, tokens = mask._novelty_chunked(actions, observations, chunk=11)
    assert novelty == pytest.approx(expect)
    assert tokens == [len(o.split()) for o in observations]
    frame = pl.DataFrame({"trajectory_id": ["big"] * 4 + ["small"] * 2, "turn_idx": [0, 1, 2, 3, 0, 1],
                          "action": actions + ["a b c", "d"], "observation": observations + ["a b c d", "c d e"]})
    whole = mask.compute_local_statistics(frame)
    monkeypatch.setattr(mask, "LARGE_TRAJECTORY", 1000)  # "big" is over it, "small" is not
    split = mask.compute_local_statistics(frame)
    assert split["novelty"].to_list() == pytest.approx(whole["novelty"].to_list())
    assert split["obs_tokens"].to_list() == whole["obs_tokens"].to_list()
    assert split.filter(pl.col("trajectory_id") == "big")["novelty"].to_list() == pytest.approx(expect)

"""The CPT builder on real trajectories: masks turn by turn, budget splits, exports, determinism, errors."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from worldforge.datasets.config import SplitConfig
from worldforge.datasets.cpt import IGNORE_INDEX, CPTConfig, build_cpt, cut_points
from worldforge.datasets.sources import iter_split_trajectories
from worldforge.datasets.tokenizer import TokenizerError


def _rows(folder: Path) -> list[dict]:
    return pq.read_table(folder / "cpt.parquet").to_pylist()


@pytest.fixture(scope="module")
def built(traj_wh, tokenizer, tmp_path_factory):
    out = tmp_path_factory.mktemp("cpt") / "cpt"
    report = build_cpt(traj_wh, out, CPTConfig(tokenizer=tokenizer, max_tokens=100_000))
    return out, report


def test_labels_match_the_informative_flags_turn_by_turn(built, traj_wh):
    out, report = built
    con = duckdb.connect(str(traj_wh.trajectory_store), read_only=True)
    flags = {(t, i): f for t, i, f in con.execute("SELECT trajectory_id, turn_idx, informative FROM turns").fetchall()}
    con.close()
    rows = _rows(out)
    assert rows and all(r["n_parts"] == 1 for r in rows)  # the budget is large: no splits
    seen = {True: 0, False: 0}
    for r in rows:
        ids, labels = r["input_ids"], r["labels"]
        in_spans = 0
        for s in r["turn_spans"]:
            assert s["informative"] == flags[(r["ref"], s["turn_idx"])]  # the store's decision, per turn
            span_ids, span_labels = ids[s["start"]:s["end"]], labels[s["start"]:s["end"]]
            assert span_labels == (span_ids if s["informative"] else [IGNORE_INDEX] * len(span_ids))
            in_spans += len(span_ids) if s["informative"] else 0
            seen[s["informative"]] += 1
        # actions and the task are masked: every loss token lies in an informative observation
        assert r["n_loss_tokens"] == in_spans == sum(lab != IGNORE_INDEX for lab in labels)
    assert seen[True] > 100 and seen[False] > 100  # both kinds occur in the real data


def test_layout_and_the_other_exports(built, tokenizer):
    from transformers import AutoTokenizer

    out, report = built
    rows = _rows(out)
    first = rows[0]
    assert first["text"].startswith("<task>\n") and "<action>\n" in first["text"] and "</observation>\n" in first["text"]
    tok = AutoTokenizer.from_pretrained(tokenizer)
    assert tok.decode(first["input_ids"]) == first["text"]  # the token ids are the text's, nothing added
    text = [json.loads(line) for line in (out / "text.jsonl").read_text().splitlines()]
    tokenized = [json.loads(line) for line in (out / "tokenized.jsonl").read_text().splitlines()]
    assert [t["text"] for t in text] == [r["text"] for r in rows]
    assert [t["labels"] for t in tokenized] == [r["labels"] for r in rows]
    assert set(tokenized[0]) == {"input_ids", "labels"}


def test_counts_balance_and_the_card_says_so(built):
    out, report = built
    assert report.tally.balanced and report.tally.inputs == report.tally.kept + sum(report.tally.dropped.values())
    assert report.tally.dropped["held out for evaluation (test split)"] > 0
    saved = json.loads((out / "report.json").read_text())
    assert saved["balanced"] and saved["files"]["cpt.parquet"] == report.samples == len(_rows(out))
    card = (out / "README.md").read_text()
    assert card.startswith("---\n") and "path: cpt.parquet" in card
    for needle in ("## Counts", "## Sources and licenses", "intercode | ", "MIT", "## Loss-mask statistics", "## Build config", "git revision"):
        assert needle in card


def test_huggingface_datasets_loads_it(built):
    import datasets

    out, _ = built
    by_file = datasets.load_dataset("parquet", data_files=str(out / "cpt.parquet"), split="train")
    by_card = datasets.load_dataset(str(out), split="train")  # the card's front matter names the file
    assert len(by_file) == len(by_card) == len(_rows(out))
    assert by_card[0]["labels"] == _rows(out)[0]["labels"]


def test_long_trajectories_split_at_turns_and_keep_every_loss_token(built, traj_wh, tokenizer, tmp_path):
    whole_out, whole = built
    report = build_cpt(traj_wh, tmp_path / "cpt", CPTConfig(tokenizer=tokenizer, max_tokens=256))
    rows = _rows(tmp_path / "cpt")
    assert report.tally.balanced and report.stats["split_units"] > 10
    assert max(r["n_tokens"] for r in rows) <= 256
    assert any(r["n_parts"] > 1 for r in rows)
    # splitting drops only parts without loss: the loss tokens of each trajectory are all kept
    loss = lambda rs: {ref: sum(r["n_loss_tokens"] for r in rs if r["ref"] == ref) for ref in {r["ref"] for r in rs}}  # noqa: E731
    assert loss(rows) == loss(_rows(whole_out))
    assert report.samples > whole.samples


def test_action_loss_can_be_switched_on(traj_wh, tokenizer, tmp_path, built):
    _, masked = built
    report = build_cpt(traj_wh, tmp_path / "cpt", CPTConfig(tokenizer=tokenizer, max_tokens=100_000, mask_actions=False))
    assert report.stats["loss_tokens"] > masked.stats["loss_tokens"]


def test_same_inputs_and_seed_give_the_same_bytes(traj_wh, tokenizer, tmp_path):
    cfg = CPTConfig(tokenizer=tokenizer, max_tokens=512)
    build_cpt(traj_wh, tmp_path / "a", cfg)
    build_cpt(traj_wh, tmp_path / "b", cfg)
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files == ["README.md", "cpt.parquet", "report.json", "text.jsonl", "tokenized.jsonl"]
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    other = build_cpt(traj_wh, tmp_path / "c", cfg.model_copy(update={"seed": 1}))
    assert (tmp_path / "c" / "cpt.parquet").read_bytes() != (tmp_path / "a" / "cpt.parquet").read_bytes()
    assert other.tally.balanced


def test_a_bad_tokenizer_is_a_clear_error_and_the_previous_dataset_stays(built, traj_wh, tmp_path):
    out, _ = built
    before = (out / "cpt.parquet").read_bytes()
    with pytest.raises(TokenizerError, match="no tokenizer here"):
        build_cpt(traj_wh, out, CPTConfig(tokenizer=str(tmp_path)))
    with pytest.raises(TokenizerError, match="cannot load a tokenizer"):
        build_cpt(traj_wh, out, CPTConfig(tokenizer=str(tmp_path / "missing")))
    assert (out / "cpt.parquet").read_bytes() == before
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_cut_points():
    assert cut_points(30, [4, 8, 25], 10) == ([0, 8, 18, 25], 1)
    assert cut_points(9, [4], 10) == ([0], 0)
    cuts, hard = cut_points(1000, [], 100)
    assert cuts == list(range(0, 1000, 100)) and hard == 9


def test_the_split_is_seeded_and_shared(traj_wh):
    a = {t.trajectory_id: t.split for t in iter_split_trajectories(traj_wh, SplitConfig(seed=0, test_fraction=0.2))}
    b = {t.trajectory_id: t.split for t in iter_split_trajectories(traj_wh, SplitConfig(seed=0, test_fraction=0.2))}
    c = {t.trajectory_id: t.split for t in iter_split_trajectories(traj_wh, SplitConfig(seed=5, test_fraction=0.2))}
    assert a == b and a != c
    assert 0.1 < sum(v == "test" for v in a.values()) / len(a) < 0.3


def test_the_mask_check_rereads_the_file_and_catches_a_wrong_label(built, tmp_path):
    import pyarrow as pa

    from worldforge.datasets.cpt import mask_mismatches

    out, _ = built
    bad, checked = mask_mismatches(out / "cpt.parquet")
    assert bad == 0 and checked > 100
    table = pq.read_table(out / "cpt.parquet")
    rows = table.to_pylist()
    victim = next(r for r in rows if any(not s["informative"] and s["end"] > s["start"] for s in r["turn_spans"]))
    span = next(s for s in victim["turn_spans"] if not s["informative"] and s["end"] > s["start"])
    victim["labels"][span["start"]] = victim["input_ids"][span["start"]]  # loss on a non-informative turn
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), tmp_path / "broken.parquet")
    assert mask_mismatches(tmp_path / "broken.parquet") == (1, checked)

"""The CPT dataset: trajectories and world pages as tokenized text with turn-level loss masks.

Stage 1 of Qwen-AgentWorld (continued pre-training on environment knowledge) with its
turn-level information-theoretic loss masking: a non-informative turn (DESIGN.md §5, decided
by the trajectory pipeline) stays in the sample as context but none of its tokens carries
loss. Layout of a trajectory sample (documented, stable)::

    <task>
    {task}
    </task>
    <action>
    {action of turn 1}
    </action>
    <observation>
    {observation of turn 1}
    </observation>
    ...

Loss (``labels`` = token id) sits on the ``<observation>`` blocks of informative turns, and on
``<action>`` blocks when ``mask_actions`` is off; every other token has ``labels = -100``. A
token belongs to the block its first character falls in (token offsets from the tokenizer).
A trajectory longer than ``max_tokens`` is split at turn boundaries into parts of at most
``max_tokens`` tokens (a single turn longer than the budget is cut at the budget). A part in
which no token carries loss is dropped and counted. World corpus pages (as ``web_extractor``
shows them) are samples with loss on every token.

Files written under ``<out>/`` (``datasets/cpt`` of the warehouse by default):

* ``cpt.parquet`` — ``sample_id, kind, origin, source, domain, ref, part, n_parts, text,
  input_ids, labels, n_tokens, n_loss_tokens, turn_spans`` where ``turn_spans`` lists the
  observation blocks ``{turn_idx, start, end, informative}`` as token ranges of the sample;
* ``text.jsonl`` — TRL ``{"text"}``; ``tokenized.jsonl`` — ``{"input_ids", "labels"}``;
* ``README.md`` — the dataset card; ``report.json`` — the build report.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from worldforge.datasets.card import md_table, render_card
from worldforge.datasets.config import CPTConfig
from worldforge.datasets.output import BuildReport, NdjsonSink, ParquetSink, git_revision, write_report
from worldforge.datasets.pipeline import Filter, batched, drain, expand, pipeline, transform
from worldforge.datasets.sources import DatasetTrajectory, iter_pages, iter_split_trajectories
from worldforge.datasets.tokenizer import load_tokenizer, resolve_tokenizer
from worldforge.tally import Tally
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.layout import Warehouse

log = logging.getLogger(__name__)

IGNORE_INDEX = -100
"""The label of a token that carries no loss (PyTorch's ``CrossEntropyLoss`` default)."""


SCHEMA = pa.schema([
    ("sample_id", pa.string()), ("kind", pa.string()), ("origin", pa.string()), ("source", pa.string()),
    ("domain", pa.string()), ("ref", pa.string()), ("part", pa.int32()), ("n_parts", pa.int32()), ("text", pa.string()),
    ("input_ids", pa.list_(pa.int32())), ("labels", pa.list_(pa.int32())), ("n_tokens", pa.int32()), ("n_loss_tokens", pa.int32()),
    ("turn_spans", pa.list_(pa.struct([("turn_idx", pa.int32()), ("start", pa.int32()), ("end", pa.int32()), ("informative", pa.bool_())]))),
])


@dataclass(frozen=True)
class Segment:
    """A block of a rendered sample: ``[start, end)`` characters, its kind and whether it carries loss."""

    kind: str  # task | action | observation | page
    turn_idx: int
    start: int
    end: int
    loss: bool
    informative: bool = True


@dataclass
class Rendered:
    """A unit to tokenize: a trajectory or a page, with its blocks."""

    kind: str
    origin: str
    source: str
    domain: str
    ref: str
    text: str
    segments: list[Segment]


def render_trajectory(traj: DatasetTrajectory, mask_actions: bool = True) -> Rendered:
    """The trajectory in the CPT layout, with the character range and loss of each block."""
    parts: list[str] = []
    segs: list[Segment] = []
    pos = 0

    def block(tag: str, body: str, kind: str, turn: int, loss: bool, informative: bool = True) -> None:
        nonlocal pos
        s = f"<{tag}>\n{body}\n</{tag}>\n"
        parts.append(s)
        segs.append(Segment(kind, turn, pos, pos + len(s), loss, informative))
        pos += len(s)

    if traj.task:
        block("task", traj.task, "task", -1, False)
    for t in traj.turns:
        block("action", t.action, "action", t.turn_idx, not mask_actions)
        block("observation", t.observation, "observation", t.turn_idx, t.informative, t.informative)
    return Rendered("trajectory", traj.origin, traj.source, traj.domain, traj.trajectory_id, "".join(parts), segs)


def cut_points(n_tokens: int, boundaries: Iterable[int], budget: int) -> tuple[list[int], int]:
    """Where to cut ``n_tokens`` tokens into parts of at most ``budget``, preferring ``boundaries``.

    Args:
        n_tokens: the sample length.
        boundaries: token indices where a part may start (turn starts), ascending.
        budget: the most tokens per part.

    Returns:
        ``(cuts, hard_cuts)``: part starts beginning with 0, and how many cuts fell inside a turn.
    """
    cuts, start, last_ok, hard = [0], 0, 0, 0
    for b in [*boundaries, n_tokens]:
        while b - start > budget:
            if last_ok > start:
                start = last_ok
            else:
                start += budget
                hard += 1
            cuts.append(start)
        last_ok = b
    return cuts, hard


@dataclass
class _GroupStats:
    tokens: int = 0
    loss_tokens: int = 0
    samples: int = 0


def _token_starts(unit: Rendered, enc) -> list[int]:
    """The first token of each block: the token holding its first character, or the next one
    when that token began in the previous block (a token belongs to the block of its first
    character). Asks the encoding for the block boundaries only, not for every token's offsets."""
    firsts = []
    for seg in unit.segments:
        t = enc.char_to_token(seg.start)
        if t is None:  # a character no token covers (a normalizer dropped it): read every offset
            starts = np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2)[:, 0]
            return [int(np.searchsorted(starts, g.start, "left")) for g in unit.segments]
        firsts.append(t + 1 if enc.token_to_chars(t)[0] < seg.start else t)
    return firsts


def _samples(unit: Rendered, enc, budget: int, group_stats: dict, report: BuildReport) -> Iterator[dict]:
    """Labels from the blocks, then the parts of one tokenized unit (``enc``: a ``tokenizers.Encoding``)."""
    ids = np.asarray(enc.ids, dtype=np.int32)
    n = len(ids)
    if n == 0:
        return
    firsts = _token_starts(unit, enc)
    bounds_of = list(zip(firsts, [*firsts[1:], n]))
    labels = np.full(n, IGNORE_INDEX, dtype=np.int32)
    for seg, (lo, hi) in zip(unit.segments, bounds_of):
        if seg.loss:
            labels[lo:hi] = ids[lo:hi]
    obs = [(seg, lo, hi) for seg, (lo, hi) in zip(unit.segments, bounds_of) if seg.kind == "observation"]
    turn_starts = [lo for seg, (lo, _) in zip(unit.segments, bounds_of) if seg.kind == "action"][1:] if unit.kind == "trajectory" else []
    cuts, hard = cut_points(n, turn_starts, budget)
    if len(cuts) > 1:
        report.stats["split_units"] = report.stats.get("split_units", 0) + 1
        report.stats["cuts_inside_a_turn"] = report.stats.get("cuts_inside_a_turn", 0) + hard
    bounds = [*cuts, n]
    for part, (a, b) in enumerate(zip(bounds, bounds[1:])):
        lab = labels[a:b]
        n_loss = int(np.count_nonzero(lab != IGNORE_INDEX))
        if n_loss == 0:
            report.stats["parts_without_loss"] = report.stats.get("parts_without_loss", 0) + 1
            continue
        text = unit.text[enc.token_to_chars(a)[0]: enc.token_to_chars(b - 1)[1]]
        spans = [{"turn_idx": s.turn_idx, "start": max(lo, a) - a, "end": min(hi, b) - a, "informative": s.informative}
                 for s, lo, hi in obs if lo < b and hi > a and hi > lo]
        for key in ("all", f"domain:{unit.domain}", f"kind:{unit.kind}"):
            t = group_stats[key]
            t.tokens += b - a
            t.loss_tokens += n_loss
            t.samples += 1
        yield {
            "kind": unit.kind, "origin": unit.origin, "source": unit.source, "domain": unit.domain, "ref": unit.ref,
            "part": part, "text": text, "input_ids": ids[a:b], "labels": lab,
            "n_tokens": b - a, "n_loss_tokens": n_loss, "turn_spans": spans,
        }


def _lists(arrays: list[np.ndarray]) -> pa.ListArray:
    """Variable-length int32 lists from numpy arrays, without a Python loop over tokens."""
    offsets = np.zeros(len(arrays) + 1, dtype=np.int32)
    np.cumsum([len(a) for a in arrays], out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(np.concatenate(arrays), type=pa.int32()))


def _table(rows: list[dict]) -> pa.Table:
    cols = {}
    for f in SCHEMA:
        if f.name in ("input_ids", "labels"):
            cols[f.name] = _lists([r[f.name] for r in rows])
        else:
            cols[f.name] = pa.array([r[f.name] for r in rows], type=f.type)
    return pa.Table.from_pydict(cols, schema=SCHEMA)


def read_trajectories(warehouse: Warehouse, config: CPTConfig, tally: Tally, sources: Counter,
                      trajectories: Iterable[DatasetTrajectory] | None = None, progress: Callable[[], None] | None = None) -> Iterator[DatasetTrajectory]:
    """The reader of trajectories: each stored one with its split (or ``trajectories``), counted in ``tally`` and by source.

    ``progress`` is called once a trajectory has gone through the steps after the reader.
    """
    for traj in (trajectories if trajectories is not None else iter_split_trajectories(warehouse, config)):
        tally.take()
        sources[traj.source] += 1
        yield traj
        if progress:
            progress()


def read_pages(warehouse: Warehouse, tally: Tally, sources: Counter, progress: Callable[[], None] | None = None) -> Iterator[Rendered]:
    """The reader of world corpus pages, each a unit with loss on every token, counted in ``tally`` and as source ``world``."""
    for page in iter_pages(warehouse):
        tally.take()
        sources["world"] += 1
        text = page.text
        yield Rendered("page", "world", "world", "search", page.url if not page.scenario else f"{page.scenario}:{page.url}",
                       text, [Segment("page", -1, 0, len(text), True)])
        if progress:
            progress()


def trajectory_filters(tally: Tally) -> list[Filter]:
    """The CPT filters of trajectories: the held-out (test split) ones, those without turns."""
    return [Filter("held out for evaluation (test split)", lambda t: t.split == "test", tally),
            Filter("no turns", lambda t: not t.turns, tally)]


class _Tokenize:
    """The batch step: tokenize a batch of units, cut each into parts; a unit with no part carrying loss is dropped.

    Yields one Arrow table (:data:`SCHEMA`) per batch with at least one sample.
    """

    def __init__(self, backend, config: CPTConfig, group_stats: dict, report: BuildReport):
        self.backend, self.config, self.group_stats, self.report = backend, config, group_stats, report

    def __call__(self, batch: list[Rendered]) -> Iterator[pa.Table]:
        encs = self.backend.encode_batch([u.text for u in batch], add_special_tokens=False)
        rows: list[dict] = []
        for unit, enc in zip(batch, encs):
            parts = list(_samples(unit, enc, self.config.max_tokens, self.group_stats, self.report))
            if not parts:
                self.report.tally.drop("no token carries loss (every turn non-informative)" if len(enc) else "empty after tokenization")
                continue
            self.report.tally.keep()
            for row in parts:
                row["sample_id"] = f"{unit.ref}:{row['part']}"
                row["n_parts"] = len(parts)
            rows += parts
        if rows:
            yield _table(rows)


class CPTWriter:
    """The CPT writer: each Arrow table of samples into ``cpt.parquet``, ``text.jsonl`` and ``tokenized.jsonl`` under ``folder``."""

    def __init__(self, folder: Path):
        self.parquet = ParquetSink(folder / "cpt.parquet", SCHEMA)
        self.text = NdjsonSink(folder / "text.jsonl", ["text"])
        self.tokenized = NdjsonSink(folder / "tokenized.jsonl", ["input_ids", "labels"])
        self.count = 0

    def add_table(self, table: pa.Table) -> None:
        """Write one table of samples (:data:`SCHEMA`) to every file."""
        self.parquet.add_table(table)
        self.text.add_table(table)
        self.tokenized.add_table(table)
        self.count += table.num_rows

    def close(self) -> None:
        """Finish every file."""
        self.parquet.close()
        self.text.close()
        self.tokenized.close()

    @property
    def files(self) -> dict[str, int]:
        """``{file name: rows}``."""
        return {"cpt.parquet": self.parquet.count, "text.jsonl": self.text.count, "tokenized.jsonl": self.tokenized.count}


def build_cpt(
    warehouse: Warehouse,
    out: str | Path,
    config: CPTConfig,
    progress: Callable[[int], None] | None = None,
    trajectories: Iterable[DatasetTrajectory] | None = None,
) -> BuildReport:
    """Build the CPT dataset from the warehouse's trajectories (train split) and corpus pages.

    The steps: read trajectories → drop held-out / turnless ones → render; read pages → render;
    tokenize in batches of ``config.batch_size`` → drop units with no loss → write (:class:`CPTWriter`).

    Args:
        warehouse: the warehouse (``trajectories.duckdb``, the episode store ``episodes/``, world files).
        out: the dataset folder, replaced atomically (default layout: ``<warehouse>/datasets/cpt``).
        config: the build config.
        progress: called with the number of units (trajectories and pages) done so far.
        trajectories: trajectories to use instead of the warehouse's (streamed; benchmarks).

    Returns:
        The build report: trajectories and pages in = written + skipped by reason.

    Raises:
        TokenizerError: the tokenizer cannot be loaded (nothing is written).
        WarehouseError: a store file is unreadable (nothing is written).
    """
    config = config.model_copy(update={"tokenizer": resolve_tokenizer(config.tokenizer, warehouse)})
    tok = load_tokenizer(config.tokenizer)
    report = BuildReport("cpt", Path(out), config=config.model_dump())
    group_stats: dict[str, _GroupStats] = defaultdict(_GroupStats)
    sources: Counter = Counter()
    turns_informative: Counter = Counter()
    turns_total: Counter = Counter()
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done)

    def render(traj: DatasetTrajectory) -> Rendered:
        for t in traj.turns:
            turns_total[traj.domain] += 1
            turns_informative[traj.domain] += t.informative
        return render_trajectory(traj, config.mask_actions)

    with atomic_dir(out) as tmp:
        writer = CPTWriter(tmp)
        units = pipeline(read_trajectories(warehouse, config, report.tally, sources, trajectories, tick),
                         *trajectory_filters(report.tally), transform(render))
        if config.include_pages and trajectories is None:
            units = chain(units, read_pages(warehouse, report.tally, sources, tick))
        drain(pipeline(units, batched(config.batch_size), expand(_Tokenize(tok.backend_tokenizer, config, group_stats, report))), writer.add_table)
        writer.close()
        report.samples = writer.count
        report.files = writer.files
        all_ = group_stats["all"]
        report.stats.update({
            "sources": dict(sorted(sources.items())),
            "tokens": all_.tokens, "loss_tokens": all_.loss_tokens,
            "loss_share": all_.loss_tokens / all_.tokens if all_.tokens else 0.0,
            "by_domain": {k.split(":", 1)[1]: {"samples": v.samples, "tokens": v.tokens, "loss_tokens": v.loss_tokens,
                                               "loss_share": v.loss_tokens / v.tokens if v.tokens else 0.0}
                          for k, v in sorted(group_stats.items()) if k.startswith("domain:")},
            "by_kind": {k.split(":", 1)[1]: {"samples": v.samples, "tokens": v.tokens} for k, v in sorted(group_stats.items()) if k.startswith("kind:")},
            "informative_turns": {d: {"turns": turns_total[d], "informative": turns_informative[d],
                                      "share": turns_informative[d] / turns_total[d] if turns_total[d] else 0.0} for d in sorted(turns_total)},
        })
        for key in ("split_units", "cuts_inside_a_turn", "parts_without_loss"):
            report.stats.setdefault(key, 0)
        if trajectories is None and not warehouse.trajectory_store.exists():
            report.notes.append("no trajectory store in the warehouse: run `worldforge trajectories ingest` (or the trajectory assets) first")
        cfg = config.model_dump()
        write_report(tmp, report)
        (tmp / "README.md").write_text(_card(report, cfg), encoding="utf-8")
    return report




def _card(report: BuildReport, config: dict) -> str:
    s = report.stats
    by_domain = [{"domain": d, **v} for d, v in s["by_domain"].items()]
    turns = [{"domain": d, **v} for d, v in s["informative_turns"].items()]
    mask = (
        f"{s['tokens']:,} tokens, {s['loss_tokens']:,} carry loss (share {s['loss_share']:.3f}). "
        f"Trajectories split by the {config['max_tokens']}-token budget: {s['split_units']} "
        f"(cuts inside a turn: {s['cuts_inside_a_turn']}); parts dropped for carrying no loss: {s['parts_without_loss']}.\n\n"
        + md_table(by_domain, ["domain", "samples", "tokens", "loss_tokens", "loss_share"])
        + "\nTurns of the train split and the share the loss-mask statistics (DESIGN.md section 5) judged informative:\n\n"
        + md_table(turns, ["domain", "turns", "informative", "share"])
    )
    summary = (
        "Continued pre-training samples (stage 1 of Qwen-AgentWorld): agent trajectories rendered as "
        "`<task>` / `<action>` / `<observation>` blocks and world corpus pages, tokenized with "
        f"`{config['tokenizer']}`. `labels` is -100 on actions{'' if config['mask_actions'] else ' (not here: mask_actions is off)'}, "
        "on the task and on every token of a non-informative turn; those turns stay as context. "
        "Files: `cpt.parquet` (all columns), `text.jsonl` (TRL `{\"text\"}`), `tokenized.jsonl` (`{\"input_ids\", \"labels\"}`). "
        "Held-out (test split) trajectories are left out; they are the AgentWorldBench export."
    )
    return render_card("worldforge CPT dataset", summary, report, config, git_revision(), {"train": "cpt.parquet"},
                       [("Loss-mask statistics", mask)])


def mask_mismatches(parquet_path: str | Path) -> tuple[int, int]:
    """Re-read a written ``cpt.parquet``: observation spans whose labels disagree with their
    turn's ``informative`` flag (labels = ids when informative, all ``-100`` otherwise).

    Returns:
        ``(mismatching spans, spans checked)``.
    """
    bad = checked = 0
    table = pq.read_table(parquet_path, columns=["input_ids", "labels", "turn_spans"])
    for ids, labels, spans in zip(*(table.column(c).to_pylist() for c in ("input_ids", "labels", "turn_spans"))):
        for s in spans:
            part = labels[s["start"]:s["end"]]
            want = ids[s["start"]:s["end"]] if s["informative"] else [IGNORE_INDEX] * len(part)
            checked += 1
            bad += part != want
    return bad, checked

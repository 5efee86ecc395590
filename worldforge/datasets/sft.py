"""The SFT dataset: next-state prediction with ``<think>`` reasoning, selected by rejection sampling.

Stage 2 of Qwen-AgentWorld. One sample per target turn of a train-split trajectory (the
informative turns by default): the domain's system prompt, the agent's task, the earlier turns
as context (user = action prompt, assistant = observation, in the AgentWorldBench layout of
:mod:`worldforge.agentworldbench.messages`), the current action, and the target::

    <think>
    {reasoning}
    </think>
    <predicted_observation>
    {the real observation}
    </predicted_observation>

**Rejection sampling** (with a world-model backend): ``k`` candidates per sample; each that
parses and has reasoning is scored by the rule verifiers (:mod:`worldforge.agentworldbench.verifiers`)
against the real observation; the best one is kept when its aggregate score reaches
``threshold``, and its reasoning becomes the target's ``<think>`` (the observation stays the real
one, so a target never states a wrong fact). Samples with no passing candidate are skipped
with the reason. Acceptance rates are recorded per domain and per verifier.

**Without a backend** the builder writes the non-thinking variant (target = the real
observation in ``<predicted_observation>`` tags, no ``<think>``) and the card says so.

**Budget**: prompt + target must fit ``max_context_tokens`` (counted with the tokenizer's chat
template; without one, over the message contents, and the report says so). The oldest context
turns are dropped first; a sample that does not fit even without context is skipped.

Files under ``<out>/``: ``sft.parquet``; TRL ``trl_messages.jsonl`` (``{"messages"}``) and
``trl_prompt_completion.jsonl`` (``{"prompt", "completion"}``); ms-swift ``swift.jsonl``
(``"loss": false`` on context assistant messages); ``sharegpt.jsonl`` (per-turn ``loss``,
AgentTraj-L style) with a LLaMA-Factory ``dataset_info.json``; ``README.md``; ``report.json``.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from worldforge.agentworldbench.infer import grounding_of
from worldforge.agentworldbench.messages import build_messages
from worldforge.agentworldbench.records import AgentWorldBenchRecord, records_from_turns
from worldforge.agentworldbench.verifiers import PASS_AT, VERIFIERS, Scores, score
from worldforge.datasets.card import md_table, render_card
from worldforge.datasets.config import SFTConfig
from worldforge.datasets.output import BuildReport, JsonlSink, ParquetSink, git_revision, write_report
from worldforge.datasets.pipeline import Filter, batched, drain, expand, pipeline
from worldforge.datasets.sources import DatasetTrajectory, iter_split_trajectories
from worldforge.datasets.tokenizer import has_chat_template, load_tokenizer, resolve_tokenizer
from worldforge.llm.base import Failure, GenerationParams, WorldModelBackend, WorldModelRequest
from worldforge.tally import Tally
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.layout import Warehouse
from worldforge.worldmodel.parsing import ParseFailure, format_prediction, parse_prediction

log = logging.getLogger(__name__)

MESSAGE_OVERHEAD = 4
"""Tokens a chat template adds per message when the tokenizer has none (role markers, separators)."""


_MSG = pa.struct([("role", pa.string()), ("content", pa.string())])
SCHEMA = pa.schema([
    ("sample_id", pa.string()), ("trajectory_id", pa.string()), ("turn_idx", pa.int32()), ("domain", pa.string()),
    ("source", pa.string()), ("origin", pa.string()), ("variant", pa.string()), ("messages", pa.list_(_MSG)),
    ("context_turns", pa.int32()), ("dropped_turns", pa.int32()), ("n_tokens", pa.int32()),
    ("candidates", pa.int32()), ("best_score", pa.float64()), ("scores", pa.string()),
])


@dataclass
class _Pending:
    """A sample whose messages fit the budget, waiting for its target."""

    traj: DatasetTrajectory
    record: AgentWorldBenchRecord
    messages: list[dict]
    dropped: int


class _Counter:
    """Token counts of message contents, and of whole conversations with the chat template."""

    def __init__(self, tok):
        self.tok = tok
        self.backend = tok.backend_tokenizer
        self.templated = has_chat_template(tok)

    def lengths(self, texts: list[str]) -> list[int]:
        """Token counts of each message's rendered text, in order."""
        return [len(e.ids) for e in self.backend.encode_batch(texts, add_special_tokens=False)] if texts else []

    def conversation(self, messages: list[dict]) -> int:
        """Tokens of a conversation: with the chat template, or its contents plus ``MESSAGE_OVERHEAD`` per message."""
        if not self.templated:
            return sum(self.lengths([m["content"] for m in messages])) + MESSAGE_OVERHEAD * len(messages)
        ids = self.tok.apply_chat_template(messages, tokenize=True)
        if isinstance(ids, Mapping):
            ids = ids["input_ids"]
        return len(ids)


def _fit(rec: AgentWorldBenchRecord, counter: _Counter, lengths: dict, budget: int, target: str, allowance: int) -> tuple[list[dict], int] | None:
    """Messages for ``rec`` with the oldest context dropped until prompt + target fit ``budget``.

    ``allowance`` reserves tokens for reasoning not written yet (the thinking variant). An
    estimate from the trajectory's cached content lengths drops the turns that cannot fit;
    :meth:`_Counter.conversation` then decides, dropping more while needed.
    Returns ``(messages, first kept context turn)`` or ``None`` when even no context is too long.
    """
    i = rec.turn_idx  # 1-based; context = turns 1..i-1
    target_tokens = counter.lengths([target])[0] + allowance
    fixed = lengths["system"] + lengths["task"] + lengths["prompt"][i - 1] + target_tokens + MESSAGE_OVERHEAD * 5
    pair = [lengths["prompt"][j] + lengths["response"][j] + 2 * MESSAGE_OVERHEAD for j in range(i - 1)]
    total = fixed + sum(pair)
    start = 0
    while start < i - 1 and total > budget:
        total -= pair[start]
        start += 1
    while True:
        messages = build_messages(rec, context_from=start)
        if counter.conversation(messages + [{"role": "assistant", "content": target}]) + allowance <= budget:
            return messages, start
        if start >= i - 1:
            return None
        start += 1


def _select(texts: list[str], reference: str, domain: str, stats: dict) -> tuple[str | None, Scores | None, str]:
    """The best candidate's reasoning and scores, or ``None`` and why none passed."""
    best: tuple[float, str, Scores] | None = None
    for text in texts:
        parsed = parse_prediction(text)
        if isinstance(parsed, ParseFailure):
            stats["candidate_failures"][parsed.reason.split(" (")[0]] += 1
            continue
        if not parsed.think:
            stats["candidate_failures"]["no <think> reasoning"] += 1
            continue
        sc = score(parsed.observation, reference, domain)
        for name in VERIFIERS:
            ok = sc.passed(name)
            if ok is not None:
                stats["verifiers"][name]["scored"] += 1
                stats["verifiers"][name]["passed"] += ok
        if best is None or sc.aggregate > best[0]:
            best = (sc.aggregate, parsed.think, sc)
    if best is None:
        return None, None, "rejected: no candidate parsed with reasoning"
    return best[1], best[2], ""


@dataclass
class _Targets:
    """A trajectory with its target turns (the informative ones, or all)."""

    traj: DatasetTrajectory
    turns: list


def read_targets(warehouse: Warehouse, config: SFTConfig, tally: Tally, sources: Counter,
                 trajectories: Iterable[DatasetTrajectory] | None = None) -> Iterator[_Targets]:
    """The SFT reader: each trajectory with its target turns, counted in ``tally`` (one unit per target turn) and by source.

    A trajectory without a target turn stands for no unit and is not yielded.
    """
    for traj in (trajectories if trajectories is not None else iter_split_trajectories(warehouse, config)):
        targets = [t for t in traj.turns if config.targets == "all" or t.informative]
        sources[traj.source] += len(targets)
        tally.take(len(targets))
        if targets:
            yield _Targets(traj, targets)


class _Prompts:
    """The step from a trajectory's targets to samples whose prompt fits the budget (:func:`_fit`); the others are dropped."""

    def __init__(self, counter: _Counter, config: SFTConfig, thinking: bool, tally: Tally, per_domain: dict):
        self.counter, self.config, self.thinking, self.tally, self.per_domain = counter, config, thinking, tally, per_domain

    def __call__(self, item: _Targets) -> Iterator[_Pending]:
        traj, counter = item.traj, self.counter
        self.per_domain[traj.domain]["targets"] += len(item.turns)
        recs = records_from_turns(traj.trajectory_id, traj.domain, traj.task, [(t.action, t.observation) for t in traj.turns], **traj.extra)
        lengths = {
            "system": counter.lengths([recs[0].system_str])[0],
            "task": sum(counter.lengths([f"The agent's task: {traj.task}", "Understood. Send the agent's actions."])) if traj.task else 0,
            "prompt": counter.lengths(recs[0].prompt),
            "response": counter.lengths(recs[0].response),
        }
        wanted = {t.turn_idx for t in item.turns}
        for t, rec in zip(traj.turns, recs):
            if t.turn_idx not in wanted:
                continue
            fitted = _fit(rec, counter, lengths, self.config.max_context_tokens, format_prediction(rec.reference(), None),
                          self.config.max_new_tokens // 2 if self.thinking else 0)
            if fitted is None:
                self.tally.drop("longer than the context budget even without context turns")
                continue
            messages, start = fitted
            yield _Pending(traj, rec, messages, start)


@dataclass
class _Chosen:
    """A sample with its target's reasoning (``None``: the non-thinking variant) and the candidates' scores."""

    pending: _Pending
    think: str | None
    candidates: int
    scores: Scores | None


class _RejectionSampling:
    """The batch step: one backend call for a batch of samples, ``k`` candidates each; a sample whose best
    candidate fails (no parse, no reasoning, below the threshold, a failed request) is dropped by reason.
    Without a backend every sample goes on as the non-thinking variant."""

    def __init__(self, backend: WorldModelBackend | None, config: SFTConfig, tally: Tally, stats: dict, progress: Callable[[int], None] | None):
        self.backend, self.config, self.tally, self.stats, self.progress = backend, config, tally, stats, progress
        self.params = GenerationParams(temperature=config.temperature, max_tokens=config.max_new_tokens, seed=config.seed)
        self.done = 0

    def __call__(self, batch: list[_Pending]) -> Iterator[_Chosen]:
        if self.backend is None:
            for p in batch:
                yield _Chosen(p, None, 0, None)
        else:
            reqs = [WorldModelRequest(id=p.record.id, messages=tuple(p.messages), grounding=grounding_of(p.record)) for p in batch]
            result = self.backend.generate(reqs, self.config.k, self.params)
            for p, req in zip(batch, reqs):
                outcome = result.failures.get(req.id) or result.completions[req.id]
                if isinstance(outcome, Failure):
                    self.tally.drop(f"generation failed: {outcome.reason.split(':')[0][:60]}")
                    continue
                think, sc, why = _select([c.text for c in outcome], p.record.reference(), p.traj.domain, self.stats)
                if think is None:
                    self.tally.drop(why)
                elif sc.aggregate < self.config.threshold:
                    self.tally.drop("rejected: best candidate below the threshold")
                else:
                    yield _Chosen(p, think, len(outcome), sc)
        self.done += len(batch)
        if self.progress:
            self.progress(self.done)


class _Rows:
    """The step from a chosen target to the ``sft.parquet`` row; one whose reasoning outgrew the budget is dropped."""

    def __init__(self, counter: _Counter, config: SFTConfig, thinking: bool, tally: Tally, per_domain: dict):
        self.counter, self.config, self.thinking, self.tally, self.per_domain = counter, config, thinking, tally, per_domain

    def __call__(self, c: _Chosen) -> Iterator[dict]:
        p, sc = c.pending, c.scores
        target = format_prediction(p.record.reference(), c.think if self.thinking else None)
        messages = p.messages + [{"role": "assistant", "content": target}]
        n_tokens = self.counter.conversation(messages)
        if n_tokens > self.config.max_context_tokens:  # the kept reasoning outgrew its allowance
            self.tally.drop("longer than the context budget with its reasoning")
            return
        self.tally.keep()
        self.per_domain[p.traj.domain]["accepted"] += 1
        yield {
            "sample_id": p.record.id, "trajectory_id": p.traj.trajectory_id, "turn_idx": p.record.turn_idx, "domain": p.traj.domain,
            "source": p.traj.source, "origin": p.traj.origin, "variant": "thinking" if self.thinking else "non-thinking",
            "messages": messages, "context_turns": p.record.turn_idx - 1 - p.dropped, "dropped_turns": p.dropped,
            "n_tokens": n_tokens, "candidates": c.candidates,
            "best_score": sc.aggregate if sc else None, "scores": json.dumps(sc.scores) if sc else None,
        }


class SFTWriter:
    """The SFT writer: each row into ``sft.parquet`` and, by :func:`export_rows`, every trainer shape's JSONL under ``folder``."""

    def __init__(self, folder: Path):
        self.sinks = {
            "parquet": ParquetSink(folder / "sft.parquet", SCHEMA),
            "trl_messages": JsonlSink(folder / "trl_messages.jsonl"),
            "trl_prompt_completion": JsonlSink(folder / "trl_prompt_completion.jsonl"),
            "swift": JsonlSink(folder / "swift.jsonl"),
            "sharegpt": JsonlSink(folder / "sharegpt.jsonl"),
        }

    def add(self, row: dict) -> None:
        """Write one sample (a row of :data:`SCHEMA`; its last message is the target)."""
        self.sinks["parquet"].add(row)
        export_rows(row["messages"], self.sinks)

    def close(self) -> None:
        """Finish every file."""
        for s in self.sinks.values():
            s.close()

    @property
    def count(self) -> int:
        """Samples written."""
        return self.sinks["trl_messages"].count

    @property
    def files(self) -> dict[str, int]:
        """``{file name: rows}``."""
        names = {"parquet": "sft.parquet", "trl_messages": "trl_messages.jsonl", "trl_prompt_completion": "trl_prompt_completion.jsonl",
                 "swift": "swift.jsonl", "sharegpt": "sharegpt.jsonl"}
        return {names[k]: s.count for k, s in self.sinks.items()}


def build_sft(
    warehouse: Warehouse,
    out: str | Path,
    config: SFTConfig,
    backend: WorldModelBackend | None = None,
    progress: Callable[[int], None] | None = None,
    trajectories: Iterable[DatasetTrajectory] | None = None,
) -> BuildReport:
    """Build the SFT dataset from the train split of the warehouse's trajectories.

    The steps: read trajectories' target turns → drop held-out ones → fit each prompt to the
    budget → rejection sampling in batches of ``config.batch_size`` (one backend call a batch)
    → drop targets whose reasoning outgrew the budget → write (:class:`SFTWriter`).

    Args:
        warehouse: the warehouse.
        out: the dataset folder, replaced atomically (``<warehouse>/datasets/sft`` by default).
        config: the build config.
        backend: the world model that proposes candidates; ``None`` builds the non-thinking variant.
        progress: called with the number of target turns done so far.
        trajectories: trajectories to use instead of the warehouse's.

    Returns:
        The build report: target turns in = samples written + skipped by reason.

    Raises:
        TokenizerError: the tokenizer cannot be loaded; BackendError: the backend cannot start.
    """
    config = config.model_copy(update={"tokenizer": resolve_tokenizer(config.tokenizer, warehouse)})
    tok = load_tokenizer(config.tokenizer)
    counter = _Counter(tok)
    thinking = backend is not None
    report = BuildReport("sft", Path(out), config=config.model_dump())
    report.notes.append(
        f"thinking variant: targets' <think> comes from the best of k={config.k} candidates of `{backend.identity}` by rejection sampling "
        f"(aggregate verifier score >= {config.threshold}); the observation is always the real one"
        if thinking else
        "non-thinking variant: no world-model backend was configured, so each target is the real observation "
        "in <predicted_observation> tags without <think> reasoning"
    )
    if not counter.templated:
        report.notes.append(f"the tokenizer `{config.tokenizer}` has no chat template: budgets and n_tokens count message "
                            f"contents plus {MESSAGE_OVERHEAD} tokens per message, not the exact template")
    stats = {"candidate_failures": Counter(), "verifiers": {v: Counter() for v in VERIFIERS}}
    per_domain: dict[str, Counter] = defaultdict(Counter)
    sources: Counter = Counter()
    tally = report.tally

    with atomic_dir(out) as tmp:
        writer = SFTWriter(tmp)
        with (backend if backend is not None else contextlib.nullcontext()):
            drain(pipeline(
                read_targets(warehouse, config, tally, sources, trajectories),
                Filter("held out for evaluation (test split)", lambda item: item.traj.split == "test", tally, weight=lambda item: len(item.turns)),
                expand(_Prompts(counter, config, thinking, tally, per_domain)),
                batched(config.batch_size),
                expand(_RejectionSampling(backend, config, tally, stats, progress)),
                expand(_Rows(counter, config, thinking, tally, per_domain)),
            ), writer.add)
        writer.close()
        report.samples = writer.count
        report.files = writer.files
        acceptance = {d: {"targets": c["targets"], "accepted": c["accepted"], "rate": c["accepted"] / c["targets"] if c["targets"] else 0.0}
                      for d, c in sorted(per_domain.items())}
        report.stats.update({
            "sources": dict(sorted(sources.items())),
            "variant": "thinking" if thinking else "non-thinking",
            "acceptance_by_domain": acceptance,
            "acceptance_by_verifier": {v: {"scored": c["scored"], "passed": c["passed"], "rate": c["passed"] / c["scored"] if c["scored"] else None}
                                       for v, c in stats["verifiers"].items()},
            "candidate_failures": dict(sorted(stats["candidate_failures"].items())),
        })
        (tmp / "dataset_info.json").write_text(json.dumps(LLAMA_FACTORY_INFO, indent=2) + "\n", encoding="utf-8")
        write_report(tmp, report)
        (tmp / "README.md").write_text(_card(report, config.model_dump() | {"backend": backend.identity if backend else None}), encoding="utf-8")
    return report




LLAMA_FACTORY_INFO = {
    "worldforge_sft": {
        "file_name": "sharegpt.jsonl", "formatting": "sharegpt",
        "columns": {"messages": "conversations", "system": "system"},
        "tags": {"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt"},
    }
}
"""The LLaMA-Factory ``dataset_info.json`` entry for ``sharegpt.jsonl``."""


def export_rows(messages: list[dict], sinks: Mapping[str, JsonlSink]) -> None:
    """One SFT sample in every trainer shape (the last assistant message is the target).

    * TRL: ``{"messages"}`` and ``{"prompt": messages[:-1], "completion": [target]}``;
    * ms-swift: ``{"messages"}`` with ``"loss": false`` on every assistant message but the target;
    * sharegpt: ``{"system", "conversations": [{"from", "value", "loss"}]}`` with ``loss`` true only
      on the target (AgentGym AgentTraj-L's per-turn ``loss``).
    """
    sinks["trl_messages"].add({"messages": messages})
    sinks["trl_prompt_completion"].add({"prompt": messages[:-1], "completion": messages[-1:]})
    last = len(messages) - 1
    sinks["swift"].add({"messages": [m | {"loss": False} if m["role"] == "assistant" and i != last else m for i, m in enumerate(messages)]})
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    roles = {"user": "human", "assistant": "gpt"}
    sinks["sharegpt"].add({"system": system, "conversations": [
        {"from": roles[m["role"]], "value": m["content"], "loss": i == last} for i, m in enumerate(messages) if m["role"] != "system"
    ]})


def _card(report: BuildReport, config: dict) -> str:
    s = report.stats
    acc = md_table([{"domain": d, **v} for d, v in s["acceptance_by_domain"].items()], ["domain", "targets", "accepted", "rate"])
    ver = md_table([{"verifier": v, "pass at": PASS_AT[v], **c} for v, c in s["acceptance_by_verifier"].items()], ["verifier", "pass at", "scored", "passed", "rate"])
    fails = md_table([{"reason": k, "candidates": v} for k, v in s["candidate_failures"].items()]) if s["candidate_failures"] else "_none_\n"
    summary = (
        "Next-state prediction samples (stage 2 of Qwen-AgentWorld): system prompt per domain, the agent's task, earlier turns "
        "as context, the current action, and the target `<think>…</think>` + `<predicted_observation>` with the real observation. "
        f"Variant: **{s['variant']}**. Files: `sft.parquet`, TRL `trl_messages.jsonl` / `trl_prompt_completion.jsonl`, "
        "ms-swift `swift.jsonl`, sharegpt `sharegpt.jsonl` + LLaMA-Factory `dataset_info.json`."
    )
    sections = [("Acceptance by domain", "Accepted = written; the others are skipped with the reasons above.\n\n" + acc),
                ("Acceptance by verifier", "Share of scored candidates passing each rule verifier.\n\n" + ver),
                ("Candidates that could not be scored", fails)]
    return render_card("worldforge SFT dataset", summary, report, config, git_revision(), {"train": "sft.parquet"}, sections)

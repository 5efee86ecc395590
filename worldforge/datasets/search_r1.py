"""Deep questions as Search-R1 training data: ``train.parquet`` and ``test.parquet`` for ``worldforge serve retrieve``.

Search-R1 (``PeterGriffinJin/Search-R1``; verl's Search-R1-like recipe reads the same) trains a policy that
alternates ``<search>`` calls to a retrieval server with reasoning and ends with ``<answer> ... </answer>``; its
reward is the exact match of that answer against a row's gold answers after SQuAD-style normalisation
(lower case, punctuation and articles dropped, spaces collapsed; ``verl/utils/reward_score/qa_em.py``). Its
data files (``scripts/data_process/nq_search.py``) hold one row per question with the columns written here:

* ``id``, ``question``, ``golden_answers`` (list of strings), ``data_source``;
* ``prompt``: ``[{"role": "user", "content": <instruction and question>}]`` — the instruction names the tags
  (``<think>``, ``<search>``, ``<information>``, ``<answer>``) as Search-R1's ``base`` template does;
* ``ability`` (``fact-reasoning``), ``reward_model`` (``{"style": "rule", "ground_truth": {"target": golden_answers}}``);
* ``extra_info``: ``split``, ``index``, and worldforge's ``world``, ``scenario``, ``question_id`` (the ``task_id`` a
  ``/retrieve`` request may name), ``answer_type``, ``hops``.

A deep question's answer is one name, number or date, which is what exact match grades. ``golden_answers`` is the
answer as the pages print it, plus the spellings a reader would give for a date (``Oct 17, 2025``:
``October 17, 2025``, ``17 October 2025``, ``2025-10-17``) or a large number (``4831``: ``4,831``).

Search-R1's trainer picks its reward function by ``data_source`` from a fixed list (``nq``, ``hotpotqa``, ...):
pass one of those (``--data-source nq``) to use its exact-match reward unchanged, or register ``worldforge``.

One corpus a world, as in the BrowseComp-Plus export: the world's own questions, or with ``scenario`` that
time-shifted scenario's (``worldforge serve retrieve --world W [--scenario S]`` serves the matching corpus; the
retrieval protocol has one world a server). Train and test are split by world (:func:`~worldforge.datasets.hf.held_out_worlds`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from worldforge.datasets.hf import held_out_worlds
from worldforge.datasets.output import export_worlds
from worldforge.errors import WorldforgeError
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.layout import Warehouse

__all__ = ["INSTRUCTION", "SearchR1Export", "export_search_r1", "golden_answers"]

INSTRUCTION = (
    "Answer the question about a fictional world below. Reason inside <think> and </think> whenever you get new "
    "information. When you need to know more, search with <search> your query </search>; the results come back between "
    "<information> and </information>. Search as often as you need. When you know the answer, give it inside <answer> and "
    "</answer> with nothing else: <answer> your answer </answer>. Question: "
)
"""The user message before the question: Search-R1's protocol (its ``base`` template's tags), in worldforge's words."""

_DATE_FORMATS = ("%b %d, %Y", "%B %d, %Y", "%Y-%m-%d")


def golden_answers(answer: str, answer_type: str) -> list[str]:
    """The answer and the other spellings of it that exact match should accept (first: the answer as printed).

    Dates (``Oct 17, 2025``) add the full month (``October 17, 2025``), day-first (``17 October 2025``) and ISO
    (``2025-10-17``); whole numbers of four digits or more add the thousands separator (``4,831``). Names stay as they are.
    """
    out = [answer]
    if answer_type == "date":
        for fmt in _DATE_FORMATS:
            try:
                day = datetime.strptime(answer.strip(), fmt).date()
            except ValueError:
                continue
            out += [f"{day:%B} {day.day}, {day.year}", f"{day:%b} {day.day}, {day.year}", f"{day.day} {day:%B} {day.year}", day.isoformat()]
            break
    elif answer_type == "number" and answer.strip().lstrip("-").isdigit() and len(answer.strip().lstrip("-")) >= 4:
        out.append(f"{int(answer):,}")
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class SearchR1Export:
    """What :func:`export_search_r1` wrote: the folder, the worlds, rows per split."""

    out: Path
    worlds: list[str]
    rows: dict[str, int]


_SCHEMA = pa.schema([
    ("id", pa.string()), ("question", pa.string()), ("golden_answers", pa.list_(pa.string())), ("data_source", pa.string()),
    ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))), ("ability", pa.string()),
    ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.struct([("target", pa.list_(pa.string()))]))])),
    ("extra_info", pa.struct([("split", pa.string()), ("index", pa.int64()), ("world", pa.string()), ("scenario", pa.string()),
                              ("question_id", pa.string()), ("answer_type", pa.string()), ("hops", pa.int64())])),
])


def export_search_r1(warehouse: Warehouse, worlds: Iterable[str], out: str | Path, scenario: str | None = None,
                     data_source: str = "worldforge", test_share: float = 0.2,
                     progress: Callable[[str], None] | None = None) -> SearchR1Export:
    """Write the deep questions of ``worlds`` as Search-R1's ``train.parquet`` and ``test.parquet`` (module docstring).

    Args:
        warehouse: the warehouse holding the worlds (tasks built: their ``deep_questions``).
        worlds: world names.
        out: the folder to write (replaced whole, atomically: a failed export leaves the previous one).
        scenario: that time-shifted scenario's questions (each world that has it); ``None``: the worlds' own.
        data_source: every row's ``data_source`` (Search-R1 picks its reward function by it).
        test_share: share of the worlds whose questions go to ``test`` (by a stable hash of the name).
        progress: called with each world's name as it is read.

    Returns:
        The rows written per split.

    Raises:
        WorldforgeError: no world given or a world missing; no question at all (worlds built before deep questions,
            or none with ``scenario``); a blank ``data_source``; ``test_share`` outside [0, 1].
    """
    from worldforge.tasks.deep import read_deep_questions

    if not data_source.strip():
        raise WorldforgeError("data_source must not be blank (Search-R1 picks its reward function by it)")
    if not 0.0 <= test_share <= 1.0:
        raise WorldforgeError(f"test_share must be between 0 and 1, not {test_share}")
    names = export_worlds(warehouse, worlds)
    held_out = held_out_worlds(names, test_share)
    rows: dict[str, list[dict]] = {"train": [], "test": []}
    for w in names:
        if progress:
            progress(w)
        split = "test" if w in held_out else "train"
        for q in read_deep_questions(warehouse.world(w), scenario):
            gold = golden_answers(q.answer, q.answer_type)
            rows[split].append({
                "id": f"{split}_{len(rows[split])}", "question": q.question, "golden_answers": gold, "data_source": data_source,
                "prompt": [{"role": "user", "content": INSTRUCTION + q.question}], "ability": "fact-reasoning",
                "reward_model": {"style": "rule", "ground_truth": {"target": gold}},
                "extra_info": {"split": split, "index": len(rows[split]), "world": w, "scenario": q.scenario, "question_id": q.question_id,
                               "answer_type": q.answer_type, "hops": q.hops},
            })
    if not rows["train"] and not rows["test"]:
        where = f" with the scenario {scenario!r}" if scenario else ""
        raise WorldforgeError(f"no deep questions in the worlds{where} (worlds built before them: rebuild their tasks)")
    out = Path(out)
    with atomic_dir(out) as tmp:
        for split, found in rows.items():
            pq.write_table(pa.Table.from_pylist(found, schema=_SCHEMA), tmp / f"{split}.parquet", compression="zstd")
    return SearchR1Export(out, names, {k: len(v) for k, v in rows.items()})

"""Generated tasks in the world's DuckDB file: ``search_tasks``.

``search_tasks(instance_id PK, world, scenario, kind, question, evaluation_json, gold_json,
provenance_json, plan_json, solvable, problems, hops, oracle_calls)`` — one row per task; ``plan_json`` is how the
answer follows from pages (the oracle agent executes it); ``hops`` the dependent lookups it takes
(:func:`~worldforge.tasks.plans.plan_hops`); ``oracle_calls`` the oracle's tool calls in a clean session, stored by
the oracle step (:func:`record_oracle_calls`; ``NULL`` before it ran) — with ``kind``, a curriculum's axes. Generated tasks go through rejection sampling: a task that
:func:`~worldforge.tasks.generate.check_solvable` finds unsolvable in its corpus is not stored (the build's
:class:`TaskBuild` keeps it and why, and its tally counts it), so ``solvable`` is true on every stored row.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import polars as pl

from worldforge.corpus.store import read_claims, read_corpus
from worldforge.errors import WarehouseError
from worldforge.tally import Tally
from worldforge.tasks.deep import DEEP_DDL, corpus_deep_questions, verify_deep
from worldforge.tasks.deep import frame as deep_frame
from worldforge.tasks.generate import CorpusCells, check_solvable, generate_tasks
from worldforge.tasks.io import Task, write_tasks
from worldforge.tasks.plans import plan_hops
from worldforge.warehouse import read_world
from worldforge.warehouse.cache import FileCache
from worldforge.warehouse.duck import atomic_duckdb, count_rows, insert_frame, open_readonly

_DDL = """
DROP VIEW IF EXISTS v_task_rows;
DROP VIEW IF EXISTS v_tasks;
DROP TABLE IF EXISTS search_tasks;
CREATE TABLE search_tasks (instance_id VARCHAR PRIMARY KEY, world VARCHAR NOT NULL, scenario VARCHAR, kind VARCHAR NOT NULL,
  question VARCHAR NOT NULL USING COMPRESSION zstd, evaluation_json VARCHAR NOT NULL USING COMPRESSION zstd,
  gold_json VARCHAR NOT NULL USING COMPRESSION zstd, provenance_json VARCHAR NOT NULL USING COMPRESSION zstd,
  plan_json VARCHAR NOT NULL USING COMPRESSION zstd, solvable BOOLEAN NOT NULL, problems VARCHAR, hops INTEGER NOT NULL,
  oracle_calls INTEGER);
COMMENT ON TABLE search_tasks IS 'WideSearch-style tasks generated from this world; gold tables computed from its rows. Only solvable tasks are stored (an unsolvable one is rejected at build time).';
CREATE OR REPLACE VIEW v_tasks AS
  SELECT instance_id, scenario, kind, json_extract_string(provenance_json, '$.table') AS source_table,
         json_array_length(gold_json) AS gold_rows, json_array_length(json_extract(evaluation_json, '$.required')) AS gold_columns,
         hops, oracle_calls, solvable, question
  FROM search_tasks;
CREATE OR REPLACE VIEW v_task_rows AS
  SELECT t.instance_id, t.scenario, json_extract_string(t.provenance_json, '$.table') AS table_name, k.row_key
  FROM search_tasks t, unnest(json_extract_string(t.provenance_json, '$.row_keys[*]')) AS k(row_key);
COMMENT ON VIEW v_tasks IS 'One row per stored task: kind, source table, gold rows, hops, the oracle''s tool calls, solvable.';
COMMENT ON VIEW v_task_rows IS 'Which world rows each task needs (its gold rows): join with a table on its primary key.';
"""


@dataclass(frozen=True)
class TaskBuild:
    """The tasks of one build and the problems of those that are not solvable in their corpus.

    Attributes:
        tasks: every generated task, unsolvable ones too (:attr:`kept` are those stored).
        unsolvable: ``{instance_id: problems}`` of the rejected ones (:func:`~worldforge.tasks.generate.check_solvable`).
    """

    tasks: list[Task]
    unsolvable: dict[str, list[str]]
    deep: list = field(default_factory=list)
    deep_problems: dict[str, str] = field(default_factory=dict)

    @property
    def kept(self) -> list[Task]:
        """The solvable tasks, in generation order: those stored and exported."""
        return [t for t in self.tasks if t.instance_id not in self.unsolvable]

    @property
    def tally(self) -> Tally:
        """Tasks generated = solvable + unsolvable, by the class of each task's first problem."""
        reasons = Counter(_problem_class(p[0]) for p in self.unsolvable.values() if p)
        return Tally.of(len(self.tasks), len(self.tasks) - len(self.unsolvable), reasons, unit="tasks", kept_as="solvable", dropped_as="unsolvable")


def _problem_class(problem: str) -> str:
    """A problem without its row and values: ``row 7: no page states models.price`` → ``no page states models.price``."""
    return re.sub(r"'[^']*'", "'…'", re.sub(r"^row [^:]*: ", "", problem))


def build_tasks(path: str | Path, per_kind: int | None = None, include_scenarios: bool = True, deep: int = 24) -> TaskBuild:
    """Generate the tasks of a world file (and its scenarios), check them and store them: the solvable wide tasks in
    ``search_tasks`` (an unsolvable one is rejected: kept in the result with its problems, not stored), and up to
    ``deep`` deep questions per corpus (:mod:`worldforge.tasks.deep`) verified in DuckDB,
    in ``deep_questions`` (only those DuckDB answers with exactly their answer; the others are the build's
    ``deep_problems``).

    Raises:
        WarehouseError: the file has no world or no corpus.
    """
    wf = read_world(path)
    tasks, unsolvable, questions = [], {}, []
    for scen, spec, tables in wf.sources(include_scenarios):
        pages, facts = read_corpus(path, scen, dressed=False)
        base = (wf.spec, wf.tables) if scen else None
        cells = CorpusCells(pages, facts)  # once per corpus, not once per task
        for t in generate_tasks(spec, tables, pages, facts, scen, per_kind=per_kind, base=base):
            problems = check_solvable(t, pages, facts, cells)
            if problems:
                unsolvable[t.instance_id] = problems
            tasks.append(t)
        if deep:
            questions += corpus_deep_questions(spec, tables, pages, facts, scen, base, deep, read_claims(path, scen))
    with open_readonly(path) as con:
        deep_problems = verify_deep(con, questions)
    questions = [q for q in questions if q.question_id not in deep_problems]
    built = TaskBuild(tasks, unsolvable, questions, deep_problems)
    rows = [(  # only solvable tasks are stored: ``solvable`` is true and ``problems`` empty on every row (the schema keeps them)
        t.instance_id, t.extra["world"], t.extra["scenario"], t.extra["kind"], t.question,
        json.dumps(t.evaluation, ensure_ascii=False), json.dumps(t.gold, ensure_ascii=False),
        json.dumps(t.extra["provenance"], ensure_ascii=False), json.dumps(t.extra["plan"], ensure_ascii=False), True, None,
        t.extra["hops"], None,
    ) for t in built.kept]
    frame = pl.DataFrame(rows, schema={**{c: pl.String for c in ("instance_id", "world", "scenario", "kind", "question", "evaluation_json",
                                                                 "gold_json", "provenance_json", "plan_json")},
                                       "solvable": pl.Boolean, "problems": pl.String, "hops": pl.Int64, "oracle_calls": pl.Int64}, orient="row")
    with atomic_duckdb(path, update=True) as con:
        con.execute(_DDL)
        insert_frame(con, "search_tasks", frame)
        con.execute(DEEP_DDL)
        insert_frame(con, "deep_questions", deep_frame(questions))
    return built


def build_and_export_tasks(path: str | Path, out_dir: str | Path) -> TaskBuild:
    """:func:`build_tasks` for a world file, then its export in the WideSearch layout
    (``out_dir/tasks.jsonl`` + ``out_dir/tables/<instance_id>.csv``, :func:`~worldforge.tasks.io.write_tasks`).

    Raises:
        WarehouseError: the file has no world or no corpus.
    """
    built = build_tasks(path)
    write_tasks(built.kept, out_dir)
    return built


def record_oracle_calls(path: str | Path, tasks: Mapping[str, int], deep: Mapping[str, int] | None = None) -> None:
    """Store the oracle's tool calls per task (``search_tasks.oracle_calls``) and per deep question
    (``deep_questions.oracle_calls``) in a world file, atomically (a failed write leaves the file as it was).
    Ids the file does not hold are ignored; a file built before these columns existed is left as it is.

    Args:
        path: the world file.
        tasks: ``{instance_id: calls}``.
        deep: ``{question_id: calls}``.

    Raises:
        WarehouseError: the file is missing or not DuckDB.
    """
    frames = {"search_tasks": ("instance_id", tasks), "deep_questions": ("question_id", deep or {})}
    with open_readonly(path) as con:
        have = {t for (t,) in con.execute("SELECT table_name FROM duckdb_columns() WHERE database_name = current_database() "
                                          "AND column_name = 'oracle_calls'").fetchall()}
    todo = {t: v for t, v in frames.items() if t in have and v[1]}
    if not todo:
        return
    with atomic_duckdb(path, update=True) as con:
        for table, (key, calls) in todo.items():
            _wf_calls = pl.DataFrame({"id": list(calls), "calls": list(calls.values())},  # noqa: F841 - read by name below
                                     schema={"id": pl.String, "calls": pl.Int64}).to_arrow()
            con.execute(f"UPDATE {table} SET oracle_calls = c.calls FROM _wf_calls c WHERE {table}.{key} = c.id")


def task_count(path: str | Path) -> int | None:
    """Tasks stored in a world file (world and scenarios), ``None`` before its first task build.

    Raises:
        WarehouseError: the file is missing or not DuckDB.
    """
    return count_rows(path, "search_tasks")


def read_tasks(path: str | Path, scenario: str | None = None, all_scenarios: bool = False) -> list[Task]:
    """Stored tasks of a world file (the world's, a scenario's, or all).

    Raises:
        WarehouseError: no tasks were built for this world yet.
    """
    con = open_readonly(path)
    try:
        has = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND table_name = 'search_tasks'").fetchall()[0][0]
        if not has:
            raise WarehouseError(f"{path}: no tasks yet (run `worldforge tasks export` or materialize search_tasks)")
        where, params = ("", []) if all_scenarios else (("WHERE scenario IS NULL", []) if scenario is None else ("WHERE scenario = ?", [scenario]))
        rows = con.sql(f"SELECT * FROM search_tasks {where} ORDER BY instance_id", params=params).pl().to_dicts()
    finally:
        con.close()
    return [
        Task(
            instance_id=r["instance_id"], question=r["question"], evaluation=json.loads(r["evaluation_json"]),
            gold=json.loads(r["gold_json"]), language="en",
            extra={"world": r["world"], "scenario": r["scenario"], "kind": r["kind"], "plan": (plan := json.loads(r["plan_json"])),
                   "provenance": json.loads(r["provenance_json"]), "hops": r.get("hops") or plan_hops(plan),
                   "oracle_calls": r.get("oracle_calls")},
        )
        for r in rows
    ]


_BY_ID: FileCache[Mapping[str, Task]] = FileCache()


def tasks_by_id(path: str | Path) -> Mapping[str, Task]:
    """Every stored task of a world file (its scenarios' included) by ``instance_id``, read once
    and cached while the file is unchanged (at most ``WORLDFORGE_OPEN_WORLDS`` files); read-only:
    the map is shared by every caller.

    Raises:
        WarehouseError: the file does not exist or has no tasks yet.
    """
    p = Path(path).resolve()
    try:
        return _BY_ID.get(p, "tasks", lambda: MappingProxyType({t.instance_id: t for t in read_tasks(p, all_scenarios=True)}))
    except FileNotFoundError:
        raise WarehouseError(f"{p}: no such world file") from None


def deep_by_id(path: str | Path) -> Mapping[str, Task]:
    """Every stored deep question of a world file (its scenarios' included) as a task
    (:func:`~worldforge.tasks.deep.as_task`, ``extra["kind"] == "deep"``) by question id; read once and cached
    while the file is unchanged, like :func:`tasks_by_id`; read-only. A file built before deep questions (no
    ``deep_questions`` table) has none: an empty map, cached too.

    Raises:
        WarehouseError: the file does not exist or cannot be read.
    """
    from worldforge.tasks.deep import as_task, read_deep_questions

    p = Path(path).resolve()

    def load() -> Mapping[str, Task]:
        if count_rows(p, "deep_questions") is None:  # built before deep questions (a locked or broken file raises)
            return MappingProxyType({})
        return MappingProxyType({q.question_id: as_task(q) for q in read_deep_questions(p, all_scenarios=True)})

    try:
        return _BY_ID.get(p, "deep", load)
    except FileNotFoundError:
        raise WarehouseError(f"{p}: no such world file") from None

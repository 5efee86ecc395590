"""A world's build, declared once: its steps and the runner that executes them.

Each :class:`Step` is one named unit, after datatrove's ``PipelineStep``: the steps it comes after,
what it writes, the checks it answers and a function ``run(WorldRun) -> StepResult``.
:data:`WORLD_STEPS` lists a world's six steps in order::

    world_tables -> scenario_tables -> search_corpus -> search_index
                                                    -> search_tasks  -> oracle_episodes

:func:`run_world` executes them for one spec file, stopping at the first step that fails or answers
a check with a failure. A run of the later steps on a built world whose file is stale (built by another
:data:`worldforge.GENERATOR_VERSION`) rebuilds it first, from its stored spec and seed, with every step the
selection comes after (:func:`stale_rebuild`), and says so in ``world_tables``' result. Every entry point
derives from the list: the Dagster world assets and their
checks are generated from it (one asset per step, ``assets/worlds.py``), ``worldforge catalog build``
builds each catalog world with :func:`run_world`, ``worldforge world run`` runs it from the shell,
and the Makefile selects the assets by :func:`step_names`.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from worldforge.errors import WorldforgeError
from worldforge.runtime import relaxed_gc
from worldforge.tally import Tally
from worldforge.warehouse.layout import Warehouse

if TYPE_CHECKING:
    from worldforge.corpus.index import RetrieverConfig
    from worldforge.corpus.rewriter import RewriterConfig
    from worldforge.spec import WorldSpec

__all__ = ["WORLD_STEPS", "Check", "CheckResult", "Json", "Markdown", "Step", "StepFailed", "StepResult", "WorldRun",
           "frame_markdown", "run_world", "select_steps", "stale_rebuild", "step_names", "with_prerequisites"]


class Markdown(str):
    """A metadata value to show as Markdown (a table, a list)."""


@dataclass(frozen=True)
class Json:
    """A metadata value to show as JSON."""

    value: Any


def frame_markdown(frame: pl.DataFrame | list[dict], rows: int | None = None) -> Markdown:
    """:func:`worldforge.tasks.frame_markdown` marked to show as Markdown."""
    from worldforge.tasks import frame_markdown as table

    return Markdown(table(frame, rows))


@dataclass(frozen=True)
class Check:
    """A check a step answers (a Dagster asset check of the step's asset).

    Attributes:
        name: the check's name (``fk_integrity`` ...).
        description: what passing means.
    """

    name: str
    description: str


@dataclass(frozen=True)
class CheckResult:
    """A check's answer.

    Attributes:
        name: the check.
        passed: it passed.
        details: what it found (shown with it: numbers, text, :class:`Markdown`, :class:`Json`).
        summary: what failed, in one line (a catalog row's error); empty when it passed.
    """

    name: str
    passed: bool
    details: dict[str, Any] = field(default_factory=dict)
    summary: str = ""


@dataclass
class StepResult:
    """What one step did.

    Attributes:
        step: the step's name.
        metadata: what it wrote and counted, for people (values: numbers, text, :class:`Markdown`,
            :class:`Json`, :class:`~pathlib.Path`).
        checks: its checks' answers, in the step's order.
        tally: its records balance (records in = kept + dropped by reason), when it reads records.
        figures: the counts the catalog keeps per world (``rows``, ``pages``, ``tasks`` ...).
        seconds: wall-clock time of the step.
        value: the library's own result (:class:`~worldforge.world.WorldBuild`,
            :class:`~worldforge.corpus.CorpusBuild`, the index builds, the task build, the oracle suite), for a
            caller that shows it as the per-step commands do; ``None`` when the step has none.
    """

    step: str
    metadata: dict[str, Any] = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)
    tally: Tally | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    value: Any = None

    @property
    def failed_checks(self) -> list[CheckResult]:
        """The checks that did not pass."""
        return [c for c in self.checks if not c.passed]


class StepFailed(WorldforgeError):
    """A step could not produce its output (an invalid spec, tables that break an invariant ...);
    nothing it would have written was written.

    Attributes:
        step: the step's name.
        metadata: what it found (shown with the failure).
        figures: what it counted before failing (``rows`` ...), as :attr:`StepResult.figures`.
        value: the library's own result as far as it got (``world_tables``: the :class:`~worldforge.world.WorldBuild`
            whose violations stopped it), as :attr:`StepResult.value`.
    """

    def __init__(self, step: str, message: str, metadata: dict[str, Any] | None = None, figures: dict[str, Any] | None = None,
                 value: Any = None):
        super().__init__(message)
        self.step, self.metadata, self.figures, self.value = step, metadata or {}, figures or {}, value


@dataclass
class WorldRun:
    """One world's run: where it reads and writes, and what its steps hand each other.

    Attributes:
        world: the world's name (its file is ``<warehouse>/<world>.duckdb``).
        warehouse: the warehouse.
        spec_path: the spec file (``world_tables`` reads it).
        rewriter: rewrite the corpus's prose pages with a model; ``None``: template pages.
        progress: called with each step's name as it starts.
        export_tasks: ``search_tasks`` also writes the WideSearch files to ``<warehouse>/tasks/<world>/``
            (``False``: the tasks stay in the world file only, as catalog worlds do; ``worldforge tasks export``
            writes them on demand).
        retriever: how ``search_index`` indexes the corpora (BM25, dense or hybrid); ``None``: BM25, and a corpus
            indexed dense or hybrid before keeps its retriever and model (its changed pages embedded again).
        spec: the validated spec (set by :func:`run_world`; a step run alone reads it from the world file).
        tables: the generated tables, likewise.
        seed: ``world_tables``' seed (``None``: the spec's).
        tasks_dir: where ``search_tasks`` writes the WideSearch files when ``export_tasks`` (``None``:
            ``<warehouse>/tasks/<world>/``).
        on_page: the corpus rewriter's progress, ``(pages done, pages in)``.
        scenarios_with_world: ``world_tables`` also builds the scenarios and writes them with the world in one atomic
            write (nothing is written when a scenario breaks an invariant); ``scenario_tables`` then checks them
            without building them again. :func:`run_world` sets it when it runs both steps.
        scenarios: the scenarios ``world_tables`` wrote with the world (``None``: not built yet).
        stale_from: the generator version recorded by the stale world file this run rebuilds from its stored spec
            (``"unknown"`` for a file from before the version was recorded); ``None``: not a stale rebuild.
    """

    world: str
    warehouse: Warehouse
    spec_path: Path | None = None
    rewriter: RewriterConfig | None = None
    progress: Callable[[str], None] = lambda _: None
    export_tasks: bool = True
    retriever: RetrieverConfig | None = None
    spec: WorldSpec | None = None
    tables: dict[str, pl.DataFrame] | None = None
    seed: int | None = None
    tasks_dir: Path | None = None
    on_page: Callable[[int, int], None] | None = None
    scenarios_with_world: bool = False
    scenarios: dict[str, dict[str, pl.DataFrame]] | None = None
    stale_from: str | None = None

    @property
    def path(self) -> Path:
        """The world file."""
        return self.warehouse.world(self.world)


@dataclass(frozen=True)
class Step:
    """One step of a world's build.

    Attributes:
        name: the step's name, also its Dagster asset's.
        description: what it writes (the asset's description).
        after: the steps whose output it reads.
        checks: the checks it answers.
        run: ``run(WorldRun) -> StepResult``; raises :class:`StepFailed` when it cannot write its output.
        group: the Dagster asset group.
        pool: the concurrency pool of runs that write a shared file (``None``: the step writes the world's own files).
        rewriter_option: the step takes the corpus rewriter (``--writer``; a Dagster run config's ``writer``).
        retriever_option: the step takes the retriever (``--retriever``; a Dagster run config).
    """

    name: str
    description: str
    after: tuple[str, ...]
    checks: tuple[Check, ...]
    run: Callable[[WorldRun], StepResult]
    group: str
    pool: str | None = None
    rewriter_option: bool = False
    retriever_option: bool = False

    def execute(self, run: WorldRun) -> StepResult:
        """:attr:`run` on ``run`` under :func:`relaxed_gc`, its wall time in :attr:`StepResult.seconds`; raises what it raises."""
        t0 = time.perf_counter()
        with relaxed_gc():
            result = self.run(run)
        result.seconds = time.perf_counter() - t0
        return result


# -- the steps ---------------------------------------------------------------------------------------

_WORLD_CHECKS = {  # which invariant (worldforge.synth.invariants) feeds which check
    "fk_integrity": {"fk_unresolved", "cardinality", "ddl_foreign_key", "pk_null", "pk_unique", "ddl_primary_key", "missing_table"},
    "row_budget": {"row_budget"},
    "declared_constraints": {"unique", "range", "monotone", "check"},
}


def _violations(found: list, kinds: set[str] | None = None, scenario: bool | None = None) -> list:
    return [v for v in found if (kinds is None or v.check in kinds) and (scenario is None or v.table.startswith("scenario_") == scenario)]


def _broken(hits: list, what: str) -> str:
    return f"{what} breaks {len(hits)} invariant(s): " + "; ".join(map(str, hits[:5])) if hits else ""


def _world_tables(run: WorldRun) -> StepResult:
    from worldforge.spec import spec_hash
    from worldforge.world import build_world_file, check_world_file

    if run.spec_path is None and run.spec is None:
        raise StepFailed("world_tables", "world_tables needs the spec file")
    built = build_world_file(run.spec or run.spec_path, run.warehouse, run.seed, with_scenarios=run.scenarios_with_world)
    if built.violations:
        raise StepFailed("world_tables", f"world {built.spec.world} breaks {len(built.violations)} invariant(s): "
                         + "; ".join(map(str, built.violations[:5])) + "; the previous file is untouched",
                         {"violations": Markdown("\n".join(f"- {v}" for v in built.violations))},
                         {"rows": sum(f.height for f in built.tables.values())}, value=built)
    run.spec, run.tables = built.spec, built.tables
    if run.scenarios_with_world:
        run.scenarios = built.scenarios
    _, found = check_world_file(built.path, every_block=False)  # re-read from DuckDB: the file itself is what is checked
    checks = [CheckResult(name, not hits, {"violations": len(hits), "details": Markdown("\n".join(f"- {v}" for v in hits) or "none")},
                          _broken(hits, "the written file")) for name, kinds in _WORLD_CHECKS.items()
              for hits in [_violations(found, kinds, scenario=False)]]
    total = sum(f.height for f in built.tables.values())
    preview = "\n\n".join(f"**{t}** ({f.height} rows)\n\n" + frame_markdown(f, 5) for t, f in built.tables.items())
    rebuilt = {} if run.stale_from is None else {"rebuilt_stale": _stale_note(run.world, run.stale_from)}
    return StepResult("world_tables", metadata={**rebuilt,
        "path": built.path, "seed": built.seed, "spec_hash": spec_hash(built.spec), "total_rows": total,
        "rows_by_table": Json({t: f.height for t, f in built.tables.items()}), "preview": Markdown(preview),
    }, checks=checks, figures={"rows": total}, value=built)


def _scenario_tables(run: WorldRun) -> StepResult:
    from worldforge.scenarios import build_scenarios
    from worldforge.warehouse import read_world, write_scenarios
    from worldforge.world import check_world_file

    if run.spec is None or run.tables is None:
        wf = read_world(run.path)
        run.spec, run.tables = wf.spec, wf.tables
    scenarios = run.scenarios
    if scenarios is None:  # not written with the world (run.scenarios_with_world): built and written here
        scenarios = build_scenarios(run.spec, run.tables)
        write_scenarios(run.path, run.spec, scenarios)
    _, found = check_world_file(run.path, every_block=False)  # the whole file, world and scenarios
    hits = _violations(found, scenario=True)  # the world's own tables are world_tables' checks
    return StepResult("scenario_tables", metadata={"scenarios": Json({n: sum(f.height for f in t.values()) for n, t in scenarios.items()})},
                      checks=[CheckResult("scenario_invariants", not hits, {"violations": Markdown("\n".join(f"- {v}" for v in hits) or "none")},
                                          _broken(hits, "the written scenarios"))],
                      figures={"scenarios": len(scenarios)}, value=scenarios)


def _search_corpus(run: WorldRun) -> StepResult:
    from worldforge.corpus import build_corpus

    built = build_corpus(run.path, rewriter=run.rewriter, on_page=run.on_page)
    bad = built.contradictions
    written = {} if built.rewriter is None else {"writer": Json(built.rewriter.to_dict()), "writer_balance": built.rewriter.summary()}
    return StepResult("search_corpus", metadata={"pages": Json({s or "(world)": n for s, n in built.report.pages.items()}),
                                                 "facts": built.report.facts, **written},
                      checks=[CheckResult("no_contradicted_fact", bad.height == 0, {"contradicted": bad.height, "examples": frame_markdown(bad, 10)},
                                          f"{bad.height} contradicted fact(s), e.g. {bad.row(0, named=True)}" if bad.height else "")],
                      tally=built.tally,
                      figures={"pages": sum(built.report.pages.values()), "facts": built.report.facts, "contradictions": bad.height},
                      value=built)


def _search_index(run: WorldRun) -> StepResult:
    from worldforge.corpus import index_world

    built = index_world(run.path, run.retriever)
    dense = [d for _, _, d in built if d is not None]
    return StepResult("search_index", metadata={
        "indexes": Json([str(d) for _, d, _ in built]), "retriever": (run.retriever.retriever if run.retriever else ("dense/hybrid" if dense else "bm25")),
        **({"dense_indexes": Json([str(d.folder) for d in dense]), "vectors": sum(d.vectors for d in dense),
            "embedded": sum(d.embedded for d in dense), "dense_bytes": sum(d.bytes for d in dense)} if dense else {}),
    }, figures={"vectors": sum(d.vectors for d in dense)} if dense else {}, value=built)


def _search_tasks(run: WorldRun) -> StepResult:
    from worldforge.tasks.store import build_and_export_tasks, build_tasks
    out = run.tasks_dir or run.warehouse.tasks(run.world)
    built = build_and_export_tasks(run.path, out) if run.export_tasks else build_tasks(run.path)
    if not run.export_tasks and run.tasks_dir is None and out.is_dir():  # an export of an earlier build: no longer this world's tasks
        shutil.rmtree(out)
    kept = built.kept
    kinds = (pl.DataFrame({"kind": [t.extra["kind"] for t in kept], "rows": [len(t.gold) for t in kept],
                           "columns": [len(t.required) for t in kept]},
                          schema={"kind": pl.String, "rows": pl.Int64, "columns": pl.Int64})
             .group_by("kind").agg(pl.len().alias("tasks"), pl.col("rows").median().alias("median rows"),
                                   pl.col("columns").median().alias("median columns"))
             .sort("kind"))
    first = next(iter(built.unsolvable.items()), None)
    summary = ("no task was generated" if not built.tasks else
               f"every task was unsolvable ({len(built.unsolvable)}), e.g. {first[0]}: {'; '.join(first[1][:3])}" if not kept else "")
    exported = {"export": out / "tasks.jsonl"} if run.export_tasks else {}
    deep_bad = built.deep_problems
    deep_summary = (f"{len(deep_bad)} deep question(s) DuckDB does not answer with their answer, e.g. {next(iter(deep_bad.items()))}"
                    if deep_bad else "")
    return StepResult("search_tasks", metadata={"tasks": len(kept), "rejected_unsolvable": len(built.unsolvable),
                                                "deep_questions": len(built.deep), **exported, "by_kind": frame_markdown(kinds)},
                      checks=[CheckResult("every_task_solvable", bool(kept), {"tasks": len(kept), "unsolvable": Json(built.unsolvable)}, summary),
                              CheckResult("deep_answers_unique", not deep_bad, {"deep_questions": len(built.deep), "problems": Json(deep_bad)},
                                          deep_summary)],
                      tally=built.tally, figures={"tasks": len(kept)}, value=built)


def _oracle_episodes(run: WorldRun) -> StepResult:
    from worldforge.agents.oracle import run_oracle_suite

    suite = run_oracle_suite(run.world, run.warehouse)
    clean, noisy = suite.clean, suite.perturbed
    below = [e.task_id for e in clean if e.f1_by_item != 1.0] + sorted(suite.scenario_below)
    unfinished = [e.task_id for e in noisy if not e.finished]
    return StepResult("oracle_episodes", metadata={
        "path": suite.path, "episodes": len(suite.episodes), "steps": sum(len(e.steps) for e in suite.episodes),
        "clean_mean_f1": sum(e.f1_by_item or 0 for e in clean) / max(len(clean), 1),
        "perturbed_mean_f1": sum(e.f1_by_item or 0 for e in noisy) / max(len(noisy), 1),
        "perturbations_fired": suite.fired,
    }, checks=[
        CheckResult("oracle_solves_every_task", suite.solved, {"clean_below_1": Json(below), "perturbed_unfinished": Json(unfinished)},
                    "" if suite.solved else f"oracle: F1 below 1 on {below[:5]} ({len(below)}), perturbed unfinished {unfinished[:5]} ({len(unfinished)})"),
        CheckResult("no_leakage", suite.leak_free, {"unrelated_queries": suite.probed, "gold_cells_revealed": suite.leaked},
                    "" if suite.leak_free else f"leakage: {suite.leaked} gold cell(s) revealed by {suite.probed} unrelated queries"),
        CheckResult("oracle_answers_every_deep_question", not suite.deep_wrong, {"deep_questions": suite.deep, "wrong": Json(suite.deep_wrong)},
                    "" if not suite.deep_wrong else f"oracle: {len(suite.deep_wrong)} of {suite.deep} deep question(s) answered wrong, e.g. "
                    f"{next(iter(suite.deep_wrong.items()))}"),
    ], figures={"oracle_f1_min": min((e.f1_by_item or 0.0 for e in clean), default=0.0)}, value=suite)


WORLD_STEPS: tuple[Step, ...] = (
    Step("world_tables", "A seeded fictional world in WAREHOUSE/<world>.duckdb, with PRIMARY/FOREIGN KEY constraints.", (),
         (Check("fk_integrity", "every foreign key resolves, cardinalities hold, keys are declared and unique"),
          Check("row_budget", "the world has 300-500 rows"),
          Check("declared_constraints", "the spec's unique, range, monotone and check constraints hold")),
         _world_tables, group="worlds"),
    Step("scenario_tables", "Time-shifted copies of the world (schema scenario_<name> in its DuckDB file).", ("world_tables",),
         (Check("scenario_invariants", "the scenarios' tables break no invariant"),), _scenario_tables, group="scenarios"),
    Step("search_corpus", "Pages in eleven web genres (encyclopedia, news, press release, ranking, profile, comparison, forum, dataset, "
         "timeline, rumor, archive) with cell provenance: corpus_pages, corpus_facts.", ("scenario_tables",),
         (Check("no_contradicted_fact", "every value a page states equals its table cell"),), _search_corpus, group="corpora",
         rewriter_option=True),
    Step("search_index", "tantivy BM25 indexes beside the world file (<world>.index, <world>.<scenario>.index), and with a dense or hybrid "
         "retriever FAISS indexes of the pages' vectors (<world>.dense, <world>.<scenario>.dense).", ("search_corpus",), (),
         _search_index, group="corpora", retriever_option=True),
    Step("search_tasks", "WideSearch-style tasks of twelve kinds (search_tasks table: question, gold, evaluation, plan, provenance, hops, oracle calls) "
         "exported to WAREHOUSE/tasks/<world>/, and deep questions with one answer in nine patterns (deep_questions table).", ("search_corpus",),
         (Check("every_task_solvable", "solvable tasks were stored, and only those (an unsolvable one is rejected and counted)"),
          Check("deep_answers_unique", "DuckDB answers every deep question with exactly its answer (one row)")), _search_tasks, group="corpora"),
    Step("oracle_episodes", "Oracle-agent episodes in the simulated search environment, clean and under the default perturbation mix "
         "(the episode store); each task's and deep question's tool calls stored on its record (oracle_calls).", ("search_index", "search_tasks"),
         (Check("oracle_solves_every_task", "the scripted oracle reaches item-F1 1.0 on every task (the scenarios' too), and finishes "
                "the world's under perturbations"),
          Check("no_leakage", "queries about other entities reveal no gold cell"),
          Check("oracle_answers_every_deep_question", "the oracle answers every deep question right through the tools alone")),
         _oracle_episodes, group="simenv"),
)
"""A world's steps, in an order that respects ``after``."""


def step_names(steps: Sequence[Step] = WORLD_STEPS) -> list[str]:
    """The steps' names, in order (what ``dagster asset materialize --select`` takes, joined by commas)."""
    return [s.name for s in steps]


def select_steps(names: str | Sequence[str] | None) -> tuple[Step, ...]:
    """The steps ``names`` selects, in :data:`WORLD_STEPS`' order (``world run --steps``).

    Args:
        names: step names, a sequence or one comma-separated string (``"search_corpus,search_index"``); repeats and
            blanks are ignored. ``None``: every step.

    Returns:
        The selected steps, in the order they run (whatever the order given).

    Raises:
        WorldforgeError: a name is not a step, or nothing is selected (the message lists the steps).
    """
    if names is None:
        return WORLD_STEPS
    wanted = [n.strip() for part in ([names] if isinstance(names, str) else names) for n in part.split(",") if n.strip()]
    known = step_names()
    unknown = [n for n in wanted if n not in known]
    if unknown or not wanted:
        what = f"unknown step {unknown[0]!r}" if unknown else "no step selected"
        raise WorldforgeError(f"{what} (the steps: {', '.join(known)})")
    return tuple(s for s in WORLD_STEPS if s.name in wanted)


def with_prerequisites(steps: Sequence[Step]) -> tuple[Step, ...]:
    """``steps`` and every step they come after (their ``after``, transitively), in :data:`WORLD_STEPS`' order."""
    by_name = {s.name: s for s in WORLD_STEPS}
    wanted, todo = set(), [s.name for s in steps]
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(by_name[name].after)
    return tuple(s for s in WORLD_STEPS if s.name in wanted)


def _stale_note(world: str, recorded: str) -> str:
    from worldforge import GENERATOR_VERSION

    return (f"{world} was built by generator version {recorded}, not {GENERATOR_VERSION}: rebuilt from the spec and seed "
            "stored in its file, with every step the selection comes after")


def stale_rebuild(warehouse: Warehouse, world: str, steps: Sequence[Step]) -> tuple[WorldSpec, int, tuple[Step, ...], str] | None:
    """What a run of ``steps`` on the built world ``world`` (no spec file) does when its file is stale, built by another
    :data:`worldforge.GENERATOR_VERSION` (or before the version was recorded): rebuild the world from the spec and seed
    its file stores (``_world.spec_json`` reads back to the same spec), running ``steps`` with every step they come after.

    Returns:
        ``(spec, seed, steps to run, recorded version or "unknown")``; ``None`` when the file is current or absent (the
        steps then read it as it is, or say it is missing).

    Raises:
        WarehouseError: the file is not a readable world.
    """
    from worldforge.warehouse import read_world
    from worldforge.warehouse.worlds import generator_version, is_stale

    path = warehouse.world(world)
    if not path.is_file():
        return None
    recorded = generator_version(path)
    if not is_stale(recorded):
        return None
    wf = read_world(path)
    return wf.spec, wf.meta["seed"], with_prerequisites(steps), recorded or "unknown"


def run_world(spec_path: str | Path | None, warehouse: Warehouse, rewriter: RewriterConfig | None = None,
              steps: Sequence[Step] = WORLD_STEPS, progress: Callable[[str], None] | None = None,
              on_result: Callable[[StepResult], None] | None = None, spec: WorldSpec | None = None,
              export_tasks: bool = True, retriever: RetrieverConfig | None = None, *, world: str | None = None,
              seed: int | None = None, tasks_dir: Path | None = None,
              on_page: Callable[[int, int], None] | None = None) -> list[StepResult]:
    """Run a world's steps for one spec file (or one built world), in order, stopping after the first step that fails a check.

    The spec is read and compiled once (here, or by the caller: ``spec``) and travels with the run. When the
    steps include both ``world_tables`` and ``scenario_tables``, the scenarios are written with the world in one
    atomic write (:attr:`WorldRun.scenarios_with_world`): a scenario that breaks an invariant leaves nothing written.
    Given a built world's name (no spec file) whose file is stale, built by another :data:`worldforge.GENERATOR_VERSION`,
    the world is rebuilt from its stored spec and seed first: ``steps`` run with every step they come after
    (:func:`stale_rebuild`), and ``world_tables``' result says so (metadata ``rebuilt_stale``).

    Args:
        spec_path: the world spec (YAML); ``None`` with ``world``: the steps read the spec from the world file
            (a selection without ``world_tables``).
        warehouse: the warehouse.
        rewriter: the corpus rewriter (``None``: template pages).
        steps: the steps to run (default: all six; :func:`select_steps` picks some by name).
        progress: called with each step's name as it starts.
        on_result: called with each step's result as it finishes (what a caller keeps when a later step raises).
        spec: ``spec_path`` already loaded (:func:`~worldforge.spec.load_spec`); ``None``: loaded here.
        export_tasks: also write the tasks' WideSearch files (:class:`WorldRun`).
        retriever: how the corpora are indexed (:class:`WorldRun`).
        world: the world's name when there is no ``spec_path`` (its file ``<warehouse>/<world>.duckdb``).
        seed: ``world_tables``' seed (``None``: the spec's).
        tasks_dir: where the WideSearch files go (``None``: ``<warehouse>/tasks/<world>/``).
        on_page: the corpus rewriter's progress, ``(pages done, pages in)``.

    Returns:
        The results of the steps that ran; the last one has failed checks when the run stopped early.

    Raises:
        StepFailed: a step could not write its output.
        SpecError: the spec is invalid (nothing is written).
        WorldforgeError: neither a spec nor a world, ``world_tables`` without a spec, or what a step's library call
            raises (no corpus, no tasks ...).
        WarehouseError: ``world`` names one of the warehouse's stores, not a world.
    """
    from worldforge.spec import load_spec

    names = step_names(steps)
    stale_from = None
    if spec_path is None:
        if world is None:
            raise WorldforgeError("a run needs a spec file or a built world's name")
        if "world_tables" in names:
            raise WorldforgeError("world_tables needs the spec file (a world's name runs the steps after it)")
        warehouse.world(world)  # a store's name is refused here, before any step
        stale = stale_rebuild(warehouse, world, steps)
        if stale is not None:  # another generator's world: rebuilt, not built upon
            spec, stored_seed, steps, stale_from = stale
            seed = stored_seed if seed is None else seed
            names = step_names(steps)
    else:
        spec = spec if spec is not None else load_spec(spec_path)
        world = spec.world
    run = WorldRun(world, warehouse, None if spec_path is None else Path(spec_path), rewriter, progress or (lambda _: None),
                   export_tasks=export_tasks, retriever=retriever, spec=spec, seed=seed, tasks_dir=tasks_dir, on_page=on_page,
                   scenarios_with_world={"world_tables", "scenario_tables"} <= set(names),
                   stale_from=stale_from)
    results: list[StepResult] = []
    for step in steps:
        run.progress(step.name)
        result = step.execute(run)
        results.append(result)
        if on_result is not None:
            on_result(result)
        if result.failed_checks:
            break
    return results

"""World assets, generated from the library's step list (:data:`worldforge.pipeline.WORLD_STEPS`): one asset per step
(``world_tables`` -> ``scenario_tables`` -> ``search_corpus`` -> ``search_index``, ``search_tasks`` -> ``oracle_episodes``),
with the step's checks, each partitioned by spec in the spec folder (``WORLDFORGE_SPECS``)."""

from pathlib import Path
from typing import Any

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    Config,
    Failure,
    MaterializeResult,
    MetadataValue,
    StaticPartitionsDefinition,
    asset,
)

from assets.metadata import WORLD_CODE_VERSION, tally_metadata
from worldforge.corpus import RetrieverConfig, rewriter_config
from worldforge.errors import WorldforgeError
from worldforge.llm import BackendError
from worldforge.pipeline import WORLD_STEPS, Json, Markdown, Step, StepFailed, StepResult, WorldRun
from worldforge.settings import get_settings
from worldforge.spec import discover_specs

world_partitions = StaticPartitionsDefinition(sorted(discover_specs(get_settings().specs)) or ["none"])


class CorpusConfig(Config):
    """Who writes the prose pages (``worldforge corpus build --writer``): ``template``, or ``openai`` (a model behind an
    OpenAI-compatible server at ``base_url``, empty: ``WORLDFORGE_VLLM_URL``; ``model`` empty: ``WORLDFORGE_VLLM_MODEL``,
    else the first one served). A page is kept only when every value checks out; replies are cached under the warehouse."""

    writer: str = "template"
    base_url: str = ""
    model: str = ""
    max_rounds: int = 2
    concurrency: int = 8
    limit: int | None = None


class IndexConfig(Config):
    """How ``search_index`` indexes the corpora (``worldforge corpus index``): ``retriever`` ``bm25``, ``dense`` or ``hybrid``
    (empty: ``WORLDFORGE_RETRIEVER``; ``bm25`` there keeps a corpus's earlier dense or hybrid index, rebuilt with its
    model), the embedding model (a sentence-transformers folder, or the served name with ``embedding_url``), the
    prompts (empty: the model's own), ``quantize`` (``none`` or ``sq8``) and ``passage_words`` (0: a page's title and
    lead; N: its title and first N words); each empty field (-1 for ``passage_words``) takes its ``WORLDFORGE_EMBEDDING_*``
    setting."""

    retriever: str = ""
    embedding_model: str = ""
    embedding_url: str = ""
    query_prompt: str = ""
    document_prompt: str = ""
    quantize: str = ""
    passage_words: int = -1


def retriever_config(config: IndexConfig) -> RetrieverConfig | None:
    """The index step's retriever from its run config over the settings (``None``: BM25, keeping a corpus's earlier retriever).

    Raises:
        WorldforgeError: an unknown retriever or quantization, or dense/hybrid without an embedding model.
    """
    return RetrieverConfig.over_settings(get_settings(), config.retriever or None, config.embedding_model or None, config.embedding_url or None,
                                         config.query_prompt or None, config.document_prompt or None, config.quantize or None,
                                         passage_words=config.passage_words if config.passage_words >= 0 else None)


def metadata_value(value: Any) -> Any:
    """A step's metadata value as Dagster metadata (Markdown, JSON and paths get their types; numbers and text pass)."""
    if isinstance(value, Markdown):
        return MetadataValue.md(str(value))
    if isinstance(value, Json):
        return MetadataValue.json(value.value)
    if isinstance(value, Path):
        return MetadataValue.path(str(value))
    return value


def _materialization(result: StepResult) -> MaterializeResult:
    metadata = {k: metadata_value(v) for k, v in result.metadata.items()}
    if result.tally is not None:
        metadata.update(tally_metadata(result.tally))
    checks = [AssetCheckResult(check_name=c.name, passed=c.passed, severity=AssetCheckSeverity.ERROR,
                               metadata={k: metadata_value(v) for k, v in c.details.items()}) for c in result.checks]
    return MaterializeResult(metadata=metadata, check_results=checks)


def world_asset(step: Step) -> AssetsDefinition:
    """The Dagster asset of one world step: partitioned by spec, after the step's ``after`` assets, with its checks, and
    the generator version in its ``code_version`` (:data:`~assets.metadata.WORLD_CODE_VERSION`: Dagster shows a world built
    by another version stale).

    A step that cannot write its output (:class:`~worldforge.pipeline.StepFailed`, a spec error, an
    unreachable writer) fails the run with its message, not a traceback.
    """
    first = not step.after  # the first step reads the spec file (the sources resource); the others read the world file
    spec = dict(name=step.name, description=step.description, partitions_def=world_partitions, group_name=step.group,
                deps=[AssetKey(a) for a in step.after], pool=step.pool, code_version=WORLD_CODE_VERSION,
                required_resource_keys={"warehouse", "sources"} if first else {"warehouse"},
                check_specs=[AssetCheckSpec(c.name, asset=step.name, description=c.description) for c in step.checks])

    def run(context: AssetExecutionContext, config: CorpusConfig | IndexConfig | None) -> MaterializeResult:
        world, warehouse = context.partition_key, context.resources.warehouse
        try:
            rewriter = None if not isinstance(config, CorpusConfig) else rewriter_config(
                config.writer, base_url=config.base_url or get_settings().vllm_url, model=config.model or get_settings().vllm_model,
                max_rounds=config.max_rounds,
                concurrency=config.concurrency, limit=config.limit)
            retriever = retriever_config(config) if isinstance(config, IndexConfig) else None
        except (ValueError, WorldforgeError) as exc:  # a bad writer or retriever in the run config: one line
            raise Failure(description=str(exc)) from None
        try:
            spec_path = context.resources.sources.spec_file(world) if first else None
            result = step.execute(WorldRun(world, warehouse.get(), spec_path, rewriter=rewriter, retriever=retriever))
        except StepFailed as exc:
            raise Failure(description=str(exc), metadata={k: metadata_value(v) for k, v in exc.metadata.items()}) from None
        except (WorldforgeError, BackendError, FileNotFoundError) as exc:  # a user's mistake or an unreachable server: one line
            raise Failure(description=str(exc)) from None
        context.log.info("%s %s: %s", step.name, world, ", ".join(f"{k}={v}" for k, v in result.figures.items()) or "done")
        return _materialization(result)

    if step.rewriter_option:
        @asset(**spec)
        def step_asset(context: AssetExecutionContext, config: CorpusConfig) -> MaterializeResult:
            return run(context, config)
    elif step.retriever_option:
        @asset(**spec)
        def step_asset(context: AssetExecutionContext, config: IndexConfig) -> MaterializeResult:
            return run(context, config)
    else:
        @asset(**spec)
        def step_asset(context: AssetExecutionContext) -> MaterializeResult:
            return run(context, None)
    return step_asset


WORLD_ASSETS: dict[str, AssetsDefinition] = {step.name: world_asset(step) for step in WORLD_STEPS}
"""The world assets by step name, in step order."""

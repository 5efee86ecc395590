"""Every default of worldforge in one place: a pydantic-settings model read from the environment.

Each field is set by the environment variable ``WORLDFORGE_<FIELD>`` (``WORLDFORGE_WAREHOUSE``,
``WORLDFORGE_ENV``, ``WORLDFORGE_TOKENIZER`` ...). A CLI option or a Dagster resource field
overrides it for one call. The library, the CLI (``worldforge settings`` prints them), the
Dagster code location (which reads them when it loads, as its resources' defaults) and the
Makefile take their defaults from here; no other place states them.

Settings are read when asked for (:func:`get_settings` builds them from the environment on
each call, which costs microseconds), so a changed environment variable takes effect at once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from worldforge.errors import WorldforgeError

ENV_PREFIX = "WORLDFORGE_"

PROJECT_ROOT = Path(__file__).resolve().parent.parent
"""The checkout worldforge runs from (bundled ``world_specs/``; ``../shared/data`` beside it)."""

ENVIRONMENTS = ("local", "gpu")
"""``local``: the ``grounded`` world model (no GPU); ``gpu``: the ``openai`` backend at :attr:`Settings.vllm_url`."""

EXECUTORS = ("multiprocess", "celery", "k8s", "ray")
"""Dagster executors the code location can run on (``assets/executors.py``)."""


OPEN_WORLD_MIB = 27
"""Resident memory of one open world in a server, its scenario's corpus, its tasks and its opened pages
included (MiB; measured over 48 catalog worlds, ``docs/scale-plan.md``)."""


def default_open_worlds() -> int:
    """The default of ``WORLDFORGE_OPEN_WORLDS``: the open worlds (:data:`OPEN_WORLD_MIB` each) that a quarter
    of the machine's physical memory holds, between 32 and 1,024 (223 on this 24 GiB machine). Fewer than a training
    run's worlds thrash the caches: with 48 worlds in play and 32 kept, a rollout ran at 21 tool steps/s
    instead of 932."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: the old default
        return 32
    return max(32, min(1024, memory // 4 // (OPEN_WORLD_MIB << 20)))


class SettingsError(WorldforgeError, ValueError):
    """An environment variable ``WORLDFORGE_*`` holds a value its setting does not accept."""


class Settings(BaseSettings):
    """worldforge's settings, each from ``WORLDFORGE_<NAME>`` or its default.

    Attributes:
        warehouse: the warehouse folder (DuckDB files, indexes, datasets). Paths are made
            absolute when the settings are read: a relative one is relative to the current
            directory at that moment.
        specs: the world spec folder (one Dagster partition per YAML file).
        catalog_specs: the catalog's spec folder (``worldforge catalog generate`` writes it, the
            ``catalog_worlds`` partitions follow it); default ``<warehouse>/catalog_specs``.
        catalog_workers: processes ``worldforge catalog build`` builds worlds on (0: one per CPU, plus one).
        store_memory_mb: DuckDB's memory limit (MiB) while the trajectory store ingests and
            recomputes loss masks; beyond it DuckDB spills to disk, so the ingest's memory does
            not grow with the input or the store.
        max_record_mb: the largest trajectory record (MiB of its JSON line, or of its turns' text)
            that readers accept; a larger one is quarantined with its size and this cap, read in
            bounded chunks (memory holds at most this much of it).
        trajectories: folders or files of real trajectories that ``trajectory_turns`` ingests;
            several separated by ``os.pathsep`` (``:``) in the environment variable.
        env: ``local`` (the grounded world model) or ``gpu`` (a ``vllm serve`` at ``vllm_url``).
        vllm_url: the OpenAI-compatible endpoint of the world model (``vllm serve`` listens on 8000).
        vllm_model: the served model name; empty: the first one the server lists.
        tokenizer: the Hugging Face tokenizer folder datasets are built for; empty: a local BPE
            stand-in trained under ``<warehouse>/models/tokenizer``.
        host: the interface servers bind (loopback unless you mean to expose them).
        search_port: port of ``worldforge serve search``.
        openenv_port: port of ``worldforge serve openenv`` (the RL environment with OpenEnv's conventions).
        vllm_port: port of ``worldforge dev serve``.
        ui_port: port of the Dagster UI (``make dev``).
        open_worlds: corpora (a world's or one of its scenarios': pages and index) and task sets
            kept open per process at most, each cache apart; the least recently used one is
            closed first (RL trainers sample tasks across a whole catalog). Default
            :func:`default_open_worlds`: as many as a quarter of the machine's memory holds.
        session_idle_s: seconds before an idle session of the search server expires.
        cache_dir: vLLM and torch inductor caches of ``worldforge dev serve``.
        executor: the Dagster executor (one of :data:`EXECUTORS`).
        ray_address: the Ray cluster ``HOST:PORT`` (``ray start --head``) that ``--engine ray`` and the
            executor join; empty: ``catalog build --engine ray`` starts a local cluster for the build.
        ray_jobs_url: the cluster's job server (``ray start --head`` serves it at ``http://HOST:8265``), where the
            ``ray`` Dagster executor submits each step.
        max_concurrent: steps at once under the multiprocess or k8s executor (0: one per CPU).
        celery_broker, celery_backend: the Celery broker and result backend URLs.
        k8s_namespace: the Kubernetes namespace of step Jobs.
        retriever: how the index step indexes a corpus and how it is then searched: ``bm25`` (tantivy), ``dense``
            (an embedding model and FAISS) or ``hybrid`` (both, fused by reciprocal rank).
        embedding_model: ``dense``/``hybrid``: a sentence-transformers model folder, or the served model's name with
            ``embedding_url``.
        embedding_url: an OpenAI-compatible ``/v1/embeddings`` endpoint (``vllm serve MODEL --runner pooling``); empty:
            the model folder is loaded in-process.
        embedding_query_prompt, embedding_document_prompt: prepended to queries and pages (e5: ``"query: "`` and
            ``"passage: "``); empty: the model's own prompts, if it has any.
        embedding_quantize: how page vectors are stored: ``none`` (float32) or ``sq8`` (8-bit, about 4x smaller).
        embedding_passage_words: what a page's vector is made of: 0, its title and lead; ``N``, its title and the
            first ``N`` words of its article.
    """

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    warehouse: Path = Path("warehouse")
    specs: Path = PROJECT_ROOT / "world_specs"
    catalog_specs: Path | None = None  # None: <warehouse>/catalog_specs (set by _catalog_specs)
    catalog_workers: int = Field(0, ge=0)
    store_memory_mb: int = Field(512, ge=64)
    max_record_mb: int = Field(16, ge=1)
    trajectories: Annotated[list[Path], NoDecode] = [PROJECT_ROOT.parent / "shared" / "data" / "trajectories"]
    env: Literal["local", "gpu"] = "local"
    vllm_url: str = "http://127.0.0.1:8000/v1"
    vllm_model: str = ""
    tokenizer: str = ""
    host: str = "127.0.0.1"
    search_port: int = Field(8000, ge=1, le=65535)
    openenv_port: int = Field(8001, ge=1, le=65535)
    vllm_port: int = Field(8000, ge=1, le=65535)
    ui_port: int = Field(3000, ge=1, le=65535)
    session_idle_s: float = Field(600.0, gt=0)
    open_worlds: int = Field(default_factory=lambda: default_open_worlds(), ge=1)
    cache_dir: Path = Path(".cache")
    executor: Literal["multiprocess", "celery", "k8s", "ray"] = "multiprocess"
    ray_address: str = ""
    ray_jobs_url: str = "http://127.0.0.1:8265"
    max_concurrent: int = Field(0, ge=0)
    celery_broker: str = "pyamqp://guest@localhost//"
    celery_backend: str = "rpc://"
    k8s_namespace: str = "worldforge"
    retriever: Literal["bm25", "dense", "hybrid"] = "bm25"
    embedding_model: str = ""
    embedding_url: str = ""
    embedding_query_prompt: str = ""
    embedding_document_prompt: str = ""
    embedding_quantize: Literal["none", "sq8"] = "none"
    embedding_passage_words: int = Field(0, ge=0)

    @field_validator("warehouse", "specs", "catalog_specs", "cache_dir", mode="before")
    @classmethod
    def _not_empty(cls, value: object) -> object:
        if isinstance(value, (str, os.PathLike)) and not str(value).strip():
            raise ValueError("must not be empty (unset the variable to use the default)")
        return value

    @field_validator("warehouse", "specs", "cache_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return Path(os.path.abspath(value.expanduser()))

    @model_validator(mode="after")
    def _catalog_specs(self) -> "Settings":
        where = self.warehouse / "catalog_specs" if self.catalog_specs is None else Path(os.path.abspath(self.catalog_specs.expanduser()))
        object.__setattr__(self, "catalog_specs", where)  # frozen: set once, while validating
        return self

    @field_validator("trajectories")
    @classmethod
    def _absolute_all(cls, value: list[Path]) -> list[Path]:
        return [Path(os.path.abspath(p.expanduser())) for p in value]

    @field_validator("trajectories", mode="before")
    @classmethod
    def _paths(cls, value: object) -> object:
        if isinstance(value, (str, os.PathLike)):
            return [p for p in str(value).split(os.pathsep) if p]
        return value

    @property
    def world_model_kind(self) -> str:
        """The world-model backend :attr:`env` selects: ``grounded`` (local) or ``openai`` (gpu)."""
        return "grounded" if self.env == "local" else "openai"

    @classmethod
    def env_var(cls, field: str) -> str:
        """The environment variable of a setting: ``warehouse`` → ``WORLDFORGE_WAREHOUSE``.

        Raises:
            KeyError: not a setting.
        """
        if field not in cls.model_fields:
            raise KeyError(field)
        return ENV_PREFIX + field.upper()

    def as_strings(self) -> dict[str, str]:
        """Every setting as the text its environment variable would hold (lists joined by ``os.pathsep``)."""
        out = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            out[name] = os.pathsep.join(map(str, value)) if isinstance(value, list) else str(value)
        return out


def get_settings(**overrides: object) -> Settings:
    """The settings from the environment, with ``overrides`` (``None`` values ignored) on top.

    Raises:
        SettingsError: a ``WORLDFORGE_*`` variable or an override holds a value its setting
            does not accept; the message names the variable and what is expected.
    """
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        problems = []
        for e in exc.errors():
            field = str(e["loc"][0]) if e["loc"] else "?"
            where = field if field in given else (Settings.env_var(field) if field in Settings.model_fields else field)
            problems.append(f"{where}: {e['msg']}")
        raise SettingsError("invalid worldforge settings: " + "; ".join(problems)) from None

"""Resources: where the warehouse lives and where the inputs come from."""


import os
from pathlib import Path

from dagster import ConfigurableResource

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SPECS = Path(os.environ.get("WORLDFORGE_SPECS", PROJECT_ROOT / "world_specs"))
DEFAULT_TRAJECTORIES = Path(os.environ.get("WORLDFORGE_TRAJECTORIES", PROJECT_ROOT.parent / "shared" / "data" / "trajectories"))
DEFAULT_WAREHOUSE = Path(os.environ.get("WORLDFORGE_WAREHOUSE", PROJECT_ROOT / "warehouse"))


class WarehouseResource(ConfigurableResource):
    """The DuckDB warehouse folder (one file per world, plus trajectories.duckdb)."""

    root: str = str(DEFAULT_WAREHOUSE)

    @property
    def path(self) -> Path:
        return Path(self.root)


class SourcesResource(ConfigurableResource):
    """Inputs: the world spec folder and the trajectory folders to ingest."""

    world_specs: str = str(DEFAULT_SPECS)
    trajectories: list[str] = [str(DEFAULT_TRAJECTORIES)]

    def spec_file(self, world: str) -> Path:
        from worldforge.spec import discover_specs

        specs = discover_specs(self.world_specs)
        if world not in specs:
            raise FileNotFoundError(f"no spec for world partition '{world}' in {self.world_specs}")
        return specs[world]


ENVIRONMENTS = {
    # the one switch: WORLDFORGE_ENV selects the world model every asset gets
    "local": {"kind": "grounded", "base_url": "", "model": ""},
    "gpu": {"kind": "openai", "base_url": os.environ.get("WORLDFORGE_VLLM_URL", "http://127.0.0.1:8000/v1"), "model": os.environ.get("WORLDFORGE_VLLM_MODEL", "")},
}


class WorldModelResource(ConfigurableResource):
    """The world model assets use: ``grounded`` locally, a ``vllm serve`` URL on a GPU environment.

    Defaults come from ``WORLDFORGE_ENV`` (``local`` | ``gpu``; with ``gpu``,
    ``WORLDFORGE_VLLM_URL`` and ``WORLDFORGE_VLLM_MODEL``); any field can be set in the launchpad.
    """

    kind: str = ""
    base_url: str = ""
    model: str = ""

    @classmethod
    def for_environment(cls, name: str | None = None) -> "WorldModelResource":
        name = name or os.environ.get("WORLDFORGE_ENV", "local")
        if name not in ENVIRONMENTS:
            raise ValueError(f"WORLDFORGE_ENV={name!r} is not an environment; choose one of: {', '.join(ENVIRONMENTS)}")
        return cls(**ENVIRONMENTS[name])

    def backend(self, warehouse: str | Path | None = None):
        """The configured :class:`worldforge.llm.WorldModelBackend` (not loaded yet)."""
        from worldforge.llm import make_backend

        kind = self.kind or "grounded"
        if kind == "grounded":
            return make_backend("grounded", warehouse=str(warehouse or DEFAULT_WAREHOUSE))
        if kind == "openai":
            return make_backend("openai", base_url=self.base_url or None, model=self.model or None)
        return make_backend(kind, model=self.model or None)


class DatasetsResource(ConfigurableResource):
    """How the CPT/SFT datasets, the AgentWorldBench export and the evaluation are built.

    ``tokenizer`` defaults to ``WORLDFORGE_TOKENIZER``; empty means worldforge's local BPE
    stand-in under ``WAREHOUSE/models/tokenizer`` (say which model's tokenizer to use for real runs).
    The seed and test fraction fix the held-out split shared by every dataset asset.
    """

    tokenizer: str = os.environ.get("WORLDFORGE_TOKENIZER", "")
    seed: int = 0
    test_fraction: float = 0.1
    cpt_max_tokens: int = 4096
    sft_max_context_tokens: int = 8192
    sft_k: int = 4
    sft_threshold: float = 0.5
    eval_max_records_per_source: int = 50

    def tokenizer_path(self, warehouse: Path) -> str:
        from worldforge.datasets.tokenizer import default_tokenizer

        return self.tokenizer or str(default_tokenizer(warehouse))

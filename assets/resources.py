"""Resources: where the warehouse lives, where the inputs come from, which world model runs.

Every default comes from :class:`worldforge.settings.Settings` (``WORLDFORGE_*``); a field set
in the launchpad overrides it for a run.
"""

from pathlib import Path

from dagster import ConfigurableResource

from worldforge.datasets.config import CPTConfig, SFTConfig, SplitConfig, default
from worldforge.runtime import apply_settings
from worldforge.settings import get_settings
from worldforge.warehouse.layout import Warehouse

_SETTINGS = apply_settings()  # the defaults shown in the UI when the code location loads; the bound of the world caches


class WarehouseResource(ConfigurableResource):
    """The DuckDB warehouse folder (one file per world, plus the trajectory and episode stores): the
    Dagster edge where the :class:`~worldforge.warehouse.layout.Warehouse` is resolved, then passed down."""

    root: str = str(_SETTINGS.warehouse)
    store_memory_mb: int = _SETTINGS.store_memory_mb  # DuckDB's memory limit (MiB) while the trajectory store is written
    max_record_mb: int = _SETTINGS.max_record_mb  # the largest trajectory record read (MiB); a larger one is quarantined

    def get(self) -> Warehouse:
        """The warehouse at :attr:`root`."""
        return Warehouse(Path(self.root))


class SourcesResource(ConfigurableResource):
    """Inputs: the world spec folder, the catalog's spec folder and the trajectory folders to ingest."""

    world_specs: str = str(_SETTINGS.specs)
    catalog_specs: str = str(_SETTINGS.catalog_specs)
    trajectories: list[str] = [str(p) for p in _SETTINGS.trajectories]

    def spec_file(self, world: str) -> Path:
        """The spec file of a world partition.

        Raises:
            FileNotFoundError: no spec of that name in the spec folder.
        """
        from worldforge.spec import discover_specs

        specs = discover_specs(self.world_specs)
        if world not in specs:
            raise FileNotFoundError(f"no spec for world partition '{world}' in {self.world_specs}")
        return specs[world]


    def catalog_spec_file(self, world: str) -> Path:
        """The spec file of a ``catalog_worlds`` partition (its file stem in the catalog's spec folder).

        Raises:
            FileNotFoundError: no spec of that name in the catalog's spec folder.
        """
        from worldforge.catalog.build import catalog_specs

        found = [p for p in (catalog_specs(self.catalog_specs) if Path(self.catalog_specs).is_dir() else []) if p.stem == world]
        if not found:
            raise FileNotFoundError(f"no spec for catalog partition '{world}' in {self.catalog_specs}")
        return found[0]


class WorldModelResource(ConfigurableResource):
    """The world model assets use: ``grounded`` locally, a ``vllm serve`` URL on a GPU environment.

    Empty fields take the settings' values (``WORLDFORGE_ENV``; with ``gpu``,
    ``WORLDFORGE_VLLM_URL`` and ``WORLDFORGE_VLLM_MODEL``); any field can be set in the launchpad.
    """

    kind: str = ""
    base_url: str = ""
    model: str = ""

    @classmethod
    def for_environment(cls, name: str | None = None) -> "WorldModelResource":
        """The resource for an environment (``local`` | ``gpu``; default ``WORLDFORGE_ENV``).

        Raises:
            SettingsError: an unknown environment name.
        """
        s = get_settings(env=name)
        return cls(kind=s.world_model_kind, base_url=s.vllm_url if s.world_model_kind == "openai" else "",
                   model=s.vllm_model if s.world_model_kind == "openai" else "")

    def backend(self, warehouse: Warehouse):
        """The configured :class:`worldforge.llm.WorldModelBackend` (not loaded yet); a ``grounded`` one replays ``warehouse``."""
        from worldforge.worldmodel.backends import world_model

        return world_model(self.kind or None, base_url=self.base_url or None, model=self.model or None, warehouse=str(warehouse), settings=get_settings())


class DatasetsResource(ConfigurableResource):
    """How the CPT/SFT datasets, the AgentWorldBench export and the evaluation are built.

    Defaults are those of :mod:`worldforge.datasets.config`. ``tokenizer`` empty:
    ``WORLDFORGE_TOKENIZER``, else worldforge's local BPE stand-in under
    ``WAREHOUSE/models/tokenizer`` (set your model's tokenizer for real runs). The seed and
    test fraction fix the held-out split shared by every dataset asset.
    """

    tokenizer: str = _SETTINGS.tokenizer
    seed: int = default(SplitConfig, "seed")
    test_fraction: float = default(SplitConfig, "test_fraction")
    cpt_max_tokens: int = default(CPTConfig, "max_tokens")
    sft_max_context_tokens: int = default(SFTConfig, "max_context_tokens")
    sft_k: int = default(SFTConfig, "k")
    sft_threshold: float = default(SFTConfig, "threshold")
    eval_max_records_per_source: int = 50  # records per source and domain in world_model_eval


    def resolved_tokenizer(self) -> str | None:
        """:attr:`tokenizer`, else ``WORLDFORGE_TOKENIZER`` as it is now; ``None``: the local stand-in (the library's default)."""
        return self.tokenizer or get_settings().tokenizer or None

    def split(self) -> dict:
        """The held-out split every dataset asset shares: ``{"seed", "test_fraction"}``."""
        return {"seed": self.seed, "test_fraction": self.test_fraction}

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

"""The DuckDB warehouse: its layout, world files, atomic writes, read-only inspection.

* :mod:`~worldforge.warehouse.layout` — where every file and folder of a warehouse lives;
* :mod:`~worldforge.warehouse.worlds` — world files (tables with keys, scenarios, ``_world``);
* :mod:`~worldforge.warehouse.duck` — DuckDB connections, atomic DuckDB writes, quoting;
* :mod:`~worldforge.warehouse.atomic` — atomic writes of plain files and folders.
"""

from worldforge.warehouse.layout import world_path
from worldforge.warehouse.worlds import WorldBuild, WorldFile, build_world_file, check_world_file, read_world, scenario_schema, write_scenarios, write_world

__all__ = [
    "WorldBuild", "WorldFile", "build_world_file", "check_world_file", "read_world", "scenario_schema", "world_path",
    "write_scenarios", "write_world",
]

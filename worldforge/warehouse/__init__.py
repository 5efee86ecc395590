"""The DuckDB warehouse: world files, the trajectory store, atomic writes."""

from worldforge.warehouse.worlds import WorldFile, check_world_file, read_world, scenario_schema, world_path, write_scenarios, write_world

__all__ = ["WorldFile", "check_world_file", "read_world", "scenario_schema", "world_path", "write_scenarios", "write_world"]

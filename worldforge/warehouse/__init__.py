"""The DuckDB warehouse: world files, the trajectory store, atomic writes."""

from worldforge.warehouse.worlds import WorldFile, check_world_file, read_world, world_path, write_world

__all__ = ["WorldFile", "check_world_file", "read_world", "world_path", "write_world"]

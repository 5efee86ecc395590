"""The DuckDB warehouse: its layout, world files, atomic writes, read-only inspection.

* :mod:`~worldforge.warehouse.layout` — :class:`Warehouse`: where every file and folder of a warehouse lives;
* :mod:`~worldforge.warehouse.worlds` — world files (tables with keys, scenarios, ``_world``), stored and read
  (generated and checked by :mod:`worldforge.world`, above it);
* :mod:`~worldforge.warehouse.duck` — DuckDB connections, atomic DuckDB writes, quoting;
* :mod:`~worldforge.warehouse.atomic` — atomic writes of plain files and folders;
* :mod:`~worldforge.warehouse.cache` — bounded caches of what world files hold, valid while a file is unchanged.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Warehouse": "worldforge.warehouse.layout",
    "WarehouseLike": "worldforge.warehouse.layout",
    "WorldFile": "worldforge.warehouse.worlds",
    "generator_version": "worldforge.warehouse.worlds",
    "is_stale": "worldforge.warehouse.worlds",
    "read_world": "worldforge.warehouse.worlds",
    "scenario_schema": "worldforge.warehouse.worlds",
    "write_scenarios": "worldforge.warehouse.worlds",
    "write_world": "worldforge.warehouse.worlds",
}
"""Each public name and the module that defines it: imported on first use (PEP 562), so importing
one submodule of this package does not import all of them."""

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))

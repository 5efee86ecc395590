"""World specs: the declarative language, its validation and its generation plan."""

from worldforge.spec.load import discover_specs, load_spec, spec_from_dict, spec_hash, spec_json
from worldforge.spec.models import ROW_BUDGET, TableSpec, WorldSpec
from worldforge.spec.plan import Plan, build_plan, validate_spec

__all__ = [
    "ROW_BUDGET", "Plan", "TableSpec", "WorldSpec", "build_plan", "discover_specs",
    "load_spec", "spec_from_dict", "spec_hash", "spec_json", "validate_spec",
]

"""Numbers at their precision: every float column has declared or derived decimals, and its stored values keep them.

A mean of readings written to one decimal is stored to three (``9.763``, never ``9.762500000000001``), a sum or a
max of them to one, a derive follows its expression (``0.1 * 3`` is ``0.3``); a float ``number`` without ``decimals``
is drawn to two (or as many as its bounds are written with).
"""

from __future__ import annotations

import copy

import pytest
import yaml

from tests.conftest import ROOT
from worldforge.spec import spec_from_dict, validate_spec
from worldforge.spec.plan import literal_decimals, round_to
from worldforge.synth import build_world

SENSORS = ROOT / "bench" / "specs" / "sensor_means.yaml"


def sensors_without_decimals() -> dict:
    """bench/specs/sensor_means.yaml with its means' ``decimals`` left out: the user's case (float noise in gold cells)."""
    doc = yaml.safe_load(SENSORS.read_text())
    for col in doc["tables"]["sites"]["columns"].values():
        if col["kind"] == "aggregate":
            col.pop("decimals", None)
    return doc


@pytest.mark.parametrize(("value", "decimals"), [(7, 0), (100.0, 0), (2.25, 2), (3.1416, 4), (0.1, 1), (1e-05, 5), (1e16, 0), (-0.5, 1)])
def test_literal_decimals(value, decimals):
    assert literal_decimals(value) == decimals


def test_round_to_leaves_ints_text_and_full_precision_alone():
    assert round_to(0.30000000000000004, 1) == 0.3
    assert str(round_to(-0.0001, 2)) == "0.0"  # no negative zero
    assert round_to(5, 2) == 5 and round_to("5.123", 1) == "5.123" and round_to(1 / 3, None) == 1 / 3


def test_derived_decimals_of_aggregates_and_derives():
    doc = sensors_without_decimals()
    sites = doc["tables"]["sites"]["columns"]
    sites["max_temperature_c"] = {"kind": "aggregate", "child": "readings", "fn": "max", "of": "temperature_c"}
    sites["total_pm25"] = {"kind": "aggregate", "child": "readings", "fn": "sum", "of": "pm25_ugm3"}
    sites["declared_mean"] = {"kind": "aggregate", "child": "readings", "fn": "mean", "of": "temperature_c", "decimals": 1}
    sites["elevation_km"] = {"kind": "derive", "expr": "elevation_m / 1000"}
    sites["spread"] = {"kind": "derive", "expr": "max_temperature_c - mean_temperature_c"}
    sites["per_reading"] = {"kind": "derive", "expr": "total_pm25 / reading_count"}
    sites["scaled"] = {"kind": "derive", "expr": "mean_pm25 * 0.5"}
    sites["rounded"] = {"kind": "derive", "expr": "round(mean_pm25 * 3.14159, 2)"}
    sites["floored"] = {"kind": "derive", "expr": "float(floor(mean_pm25))"}
    readings = doc["tables"]["readings"]["columns"]
    readings["raw"] = {"kind": "number", "min": 0, "max": 1}
    sites["raw_mean"] = {"kind": "aggregate", "child": "readings", "fn": "mean", "of": "raw"}
    sites["raw_scaled"] = {"kind": "derive", "expr": "raw_mean * 2"}
    got = validate_spec(spec_from_dict(doc)).decimals
    want = {"mean_temperature_c": 3, "mean_pm25": 3, "max_temperature_c": 1, "total_pm25": 1, "declared_mean": 1,
            "elevation_km": 3, "spread": 3, "per_reading": 3, "scaled": 4, "rounded": 2, "floored": 0,
            "raw_mean": 4, "raw_scaled": 4, "reading_count": 0, "elevation_m": 0}
    assert {c: got[("sites", c)] for c in want} == want
    assert got[("readings", "temperature_c")] == 1 and got[("readings", "raw")] == 2


def _decimals_of(x: float) -> int:
    return literal_decimals(x)


def test_stored_values_carry_no_float_noise():
    doc = sensors_without_decimals()
    sites = doc["tables"]["sites"]["columns"]
    sites["total_pm25"] = {"kind": "aggregate", "child": "readings", "fn": "sum", "of": "pm25_ugm3"}
    sites["tenth"] = {"kind": "derive", "expr": "mean_pm25 * 0.1 + 0.2"}
    spec = spec_from_dict(doc)
    decimals = validate_spec(spec).decimals
    tables = build_world(spec)
    for column in ("mean_temperature_c", "mean_pm25", "total_pm25", "tenth"):
        values = [v for v in tables["sites"][column].to_list() if v is not None]
        assert values and all(_decimals_of(v) <= decimals[("sites", column)] for v in values), (column, values[:5])
        assert all("9999999" not in repr(v) and "0000000" not in repr(v) for v in values), (column, values[:5])


def test_a_float_number_without_decimals_is_drawn_to_two_or_its_bounds_decimals():
    doc = copy.deepcopy(yaml.safe_load(SENSORS.read_text()))
    readings = doc["tables"]["readings"]["columns"]
    readings["pm25_ugm3"].pop("decimals")
    readings["fine"] = {"kind": "number", "min": 0, "max": 0.005}
    readings["skewed"] = {"kind": "number", "min": 5, "max": 405, "distribution": "exponential", "mean": 66.66666666666667}
    for col in doc["tables"]["sites"]["columns"].values():
        col.pop("decimals", None)
    spec = spec_from_dict(doc)
    decimals = validate_spec(spec).decimals
    assert decimals[("readings", "pm25_ugm3")] == 2 and decimals[("readings", "fine")] == 3 and decimals[("sites", "mean_pm25")] == 4
    assert decimals[("readings", "skewed")] == 2  # a distribution's mean is a parameter, not a precision
    tables = build_world(spec)
    assert all(_decimals_of(v) <= 2 for v in tables["readings"]["pm25_ugm3"].to_list())
    assert all(0 <= v <= 0.005 and _decimals_of(v) <= 3 for v in tables["readings"]["fine"].to_list())
    assert all(_decimals_of(v) <= 4 for v in tables["sites"]["mean_pm25"].to_list() if v is not None)


def test_declared_decimals_keep_their_tables():
    """Rounding a value already at its declared decimals changes nothing: a spec that declares them builds as before."""
    clean = build_world(spec_from_dict(yaml.safe_load(SENSORS.read_text())))
    assert clean["sites"]["mean_pm25"].to_list() == [round(v, 2) for v in clean["sites"]["mean_pm25"].to_list()]

"""Checks with ``enforce: resample``: failing rows are redrawn while the world is generated."""

import copy
import os
import subprocess
import sys

import polars as pl
import pytest
import yaml

from tests.conftest import ROOT
from tests.synth.test_generate import digest
from worldforge.errors import GenerationError, SpecError
from worldforge.spec import spec_from_dict, spec_hash
from worldforge.spec.limits import MAX_RESAMPLE_TRIES
from worldforge.synth import build_world, check_world

# Fails for most models (shipments are lognormal around 900k, batteries normal around 4,900 mAh) and,
# through a parent column, for most listings (listed 0–60 days after launch).
MODELS_CHECK = "shipments_k >= 800 and battery_mah > 4500"
LISTINGS_CHECK = "listed_on <= add_days(models.launch_date, 10)"


def with_checks(doc: dict, enforce: str | None, **extra: list[dict]) -> dict:
    """A copy of ``doc`` with the two checks above (and ``extra`` constraints per table) appended."""
    d = copy.deepcopy(doc)
    more = {"enforce": enforce} if enforce else {}
    d["tables"]["models"]["constraints"].append({"kind": "check", "expr": MODELS_CHECK, **more})
    d["tables"]["listings"]["constraints"].append({"kind": "check", "expr": LISTINGS_CHECK, **more})
    for table, cons in extra.items():
        d["tables"][table]["constraints"].extend(cons)
    return d


def holds(frame: pl.DataFrame, expr: pl.Expr) -> bool:
    return bool(frame.select(expr.all()).item())


def test_verify_reports_the_rows_resample_redraws(phone_doc):
    verify = spec_from_dict(with_checks(phone_doc, None))
    found = {(v.table, v.check): v.rows for v in check_world(verify, build_world(verify, 3))}
    assert found[("models", "check")] > 50 and found[("listings", "check")] > 50

    spec = spec_from_dict(with_checks(phone_doc, "resample"))
    t = build_world(spec, 3)
    assert check_world(spec, t) == []
    models, listings = t["models"], t["listings"]
    assert holds(models, (pl.col("shipments_k") >= 800) & (pl.col("battery_mah") > 4500))
    lj = listings.join(models.select("model_id", "launch_date"), on="model_id")
    assert holds(lj, pl.col("listed_on") <= pl.col("launch_date") + pl.duration(days=10))


def test_resample_keeps_keys_references_and_row_counts(phone_doc):
    before = build_world(spec_from_dict(with_checks(phone_doc, None)), 3)
    after = build_world(spec_from_dict(with_checks(phone_doc, "resample")), 3)
    assert {k: f.height for k, f in before.items()} == {k: f.height for k, f in after.items()}
    changed = {(t, c) for t in before for c in before[t].columns if not before[t][c].equals(after[t][c])}
    # only the checks' drawn inputs and what derives from them
    assert changed == {
        ("models", "shipments_k"), ("models", "battery_mah"), ("models", "rank_in_brand"),
        ("brands", "shipments_k"), ("brands", "market_share_pct"), ("brands", "market_rank"),
        ("listings", "days_after_launch"), ("listings", "listed_on"),
    }


def test_derived_columns_follow_the_redrawn_values(phone_doc):
    t = build_world(spec_from_dict(with_checks(phone_doc, "resample")), 3)
    brands, models, listings = t["brands"], t["models"], t["listings"]
    sums = models.group_by("brand_id").agg(pl.col("shipments_k").sum().alias("s"))
    assert holds(brands.join(sums, on="brand_id"), pl.col("shipments_k") == pl.col("s"))
    assert abs(brands["market_share_pct"].sum() - 100) < 0.1
    assert brands.sort("market_rank")["shipments_k"].is_sorted(descending=True)
    lj = listings.join(models.select("model_id", "launch_date"), on="model_id")
    assert holds(lj, pl.col("listed_on") == pl.col("launch_date") + pl.duration(days=1) * pl.col("days_after_launch"))


def test_same_seed_same_tables_other_seed_other_tables(phone_doc):
    spec = spec_from_dict(with_checks(phone_doc, "resample"))
    assert digest(build_world(spec, 7)) == digest(build_world(spec, 7))
    assert digest(build_world(spec, 7)) != digest(build_world(spec, 8))
    for seed in range(6):
        assert check_world(spec, build_world(spec, seed)) == [], f"seed {seed}"


def test_same_tables_in_a_fresh_interpreter(phone_doc, tmp_path):
    path = tmp_path / "phones.yaml"
    path.write_text(yaml.safe_dump(with_checks(phone_doc, "resample"), sort_keys=False))
    code = (
        "from tests.synth.test_generate import digest\n"
        "from worldforge.spec import load_spec\n"
        "from worldforge.synth import build_world\n"
        f"print(digest(build_world(load_spec({str(path)!r}), 4)))\n"
    )
    got = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONHASHSEED="321")).stdout.strip()
    assert got == digest(build_world(spec_from_dict(with_checks(phone_doc, "resample")), 4))


def test_a_check_that_always_holds_changes_nothing(phone_doc, specs):
    """The first draw of every column is the one a spec without resample checks gives."""
    d = copy.deepcopy(phone_doc)
    d["tables"]["models"]["constraints"][2]["enforce"] = "resample"  # launch_date >= announced
    assert digest(build_world(spec_from_dict(d), 5)) == digest(build_world(specs["smartphones_2029"], 5))


def test_enforce_verify_is_the_default_and_keeps_the_spec_hash(phone_doc, specs):
    d = copy.deepcopy(phone_doc)
    for con in d["tables"]["models"]["constraints"]:
        if con["kind"] == "check":
            con["enforce"] = "verify"
    spec = spec_from_dict(d)
    assert spec_hash(spec) == spec_hash(specs["smartphones_2029"])
    assert spec.tables["models"].constraints[2].enforce == "verify"
    assert spec_hash(spec_from_dict(with_checks(phone_doc, "resample"))) != spec_hash(spec_from_dict(with_checks(phone_doc, None)))


def test_unique_columns_stay_unique(phone_doc):
    d = with_checks(phone_doc, "resample", brands=[
        {"kind": "check", "expr": "name != 'Apple' and name != 'Samsung' and name != 'Xiaomi'", "enforce": "resample"},
    ], retailers=[
        {"kind": "check", "expr": "len(name) <= 14", "enforce": "resample"},
    ])
    verify = copy.deepcopy(d)
    for con in verify["tables"]["retailers"]["constraints"] + verify["tables"]["brands"]["constraints"]:
        con.pop("enforce", None)
    v = spec_from_dict(verify)
    assert {"brands", "retailers"} <= {x.table for x in check_world(v, build_world(v, 1)) if x.check == "check"}
    spec = spec_from_dict(d)
    t = build_world(spec, 1)
    assert check_world(spec, t) == []
    assert t["brands"]["name"].n_unique() == 14 and not set(t["brands"]["name"]) & {"Apple", "Samsung", "Xiaomi"}
    assert t["retailers"]["name"].n_unique() == 40 and t["retailers"]["name"].str.len_chars().max() <= 14
    # codes derive from names and are recomputed
    assert holds(t["brands"], pl.col("code") == pl.col("name").str.slice(0, 3).str.to_uppercase())


def test_an_impossible_check_names_table_check_rows_and_bound(phone_doc):
    d = copy.deepcopy(phone_doc)
    d["tables"]["listings"]["constraints"].append({"kind": "check", "expr": "discount_pct < 0", "enforce": "resample"})
    with pytest.raises(GenerationError) as info:
        build_world(spec_from_dict(d))
    msg = str(info.value)
    assert "table 'listings'" in msg and "'discount_pct < 0'" in msg and "tables.listings.constraints.2" in msg
    assert "150 of 150 rows" in msg and f"after {MAX_RESAMPLE_TRIES} redraws of discount_pct" in msg
    assert "MAX_RESAMPLE_TRIES" in msg


def test_the_error_lists_at_most_three_checks(phone_doc):
    for expr in ["discount_pct < 0", "days_after_launch < 0", "discount_pct > 30", "days_after_launch > 60", "discount_pct == 31"]:
        phone_doc["tables"]["listings"]["constraints"].append({"kind": "check", "expr": expr, "enforce": "resample"})
    with pytest.raises(GenerationError) as info:
        build_world(spec_from_dict(phone_doc))
    msg = str(info.value)
    assert msg.count("still fails for") == 3 and "2 more resample checks" in msg


def test_unknown_enforce_value_names_the_field(phone_doc):
    phone_doc["tables"]["models"]["constraints"][2]["enforce"] = "always"
    with pytest.raises(SpecError) as info:
        spec_from_dict(phone_doc)
    assert info.value.problems == [("tables.models.constraints.2.enforce", "Input should be 'verify' or 'resample'")]


@pytest.mark.parametrize("table, expr", [
    ("listings", "models.launch_price_usd > 0"),  # parent columns are read, never redrawn
    ("listings", "listing_id >= 1000"),  # a sequence key
    ("models", "brand_id > 0"),  # a reference
    ("brands", "shipments_k > 0"),  # an aggregate of another table's column
])
def test_resample_needs_a_column_it_can_redraw(phone_doc, table, expr):
    phone_doc["tables"][table]["constraints"].append({"kind": "check", "expr": expr, "enforce": "resample"})
    with pytest.raises(SpecError) as info:
        spec_from_dict(phone_doc)
    (path, msg), = info.value.problems
    assert path.startswith(f"tables.{table}.constraints.") and path.endswith(".enforce")
    assert "can be redrawn" in msg and "enforce: verify" in msg


def test_a_parent_aggregate_of_this_table_is_redrawn_through(phone_doc):
    """A child's check on its parent's aggregate of the child redraws the child's column."""
    phone_doc["tables"]["models"]["constraints"].append({"kind": "check", "expr": "brands.shipments_k >= 8000", "enforce": "resample"})
    spec = spec_from_dict(phone_doc)
    t = build_world(spec, 2)
    assert check_world(spec, t) == [] and holds(t["brands"], pl.col("shipments_k") >= 8000)


def test_cli_build_resample_and_an_impossible_check(phone_doc, tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(with_checks(phone_doc, "resample"), sort_keys=False))
    bad = tmp_path / "bad.yaml"
    d = copy.deepcopy(phone_doc)
    d["tables"]["listings"]["constraints"].append({"kind": "check", "expr": "discount_pct < 0", "enforce": "resample"})
    bad.write_text(yaml.safe_dump(d, sort_keys=False))

    def build(path, wh):
        return subprocess.run([sys.executable, "-m", "worldforge.cli", "world", "build", str(path), "--warehouse", str(wh)],
                              capture_output=True, text=True, cwd=ROOT)

    ok = build(good, tmp_path / "wh1")
    assert ok.returncode == 0, ok.stderr
    world = tmp_path / "wh1" / "smartphones_2029.duckdb"
    check = subprocess.run([sys.executable, "-m", "worldforge.cli", "world", "check", str(world)], capture_output=True, text=True, cwd=ROOT)
    assert check.returncode == 0 and "no violations" in check.stdout, check.stdout + check.stderr  # the stored spec keeps enforce
    proc = build(bad, tmp_path / "wh2")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    assert "listings" in lines[0] and "discount_pct < 0" in lines[0] and f"{MAX_RESAMPLE_TRIES} redraws" in lines[0]
    assert not (tmp_path / "wh2" / "smartphones_2029.duckdb").exists()

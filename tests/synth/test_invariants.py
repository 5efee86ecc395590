import polars as pl
import pytest

from worldforge.synth import build_world, check_world


@pytest.fixture
def world(specs):
    spec = specs["smartphones_2029"]
    return spec, build_world(spec, 8)


def checks(spec, tables) -> set[tuple[str, str]]:
    return {(v.table, v.check) for v in check_world(spec, tables)}


def test_clean_world_has_no_violations(world):
    assert check_world(*world) == []


def test_duplicate_and_null_primary_keys(world):
    spec, t = world
    t["retailers"] = t["retailers"].with_columns(pl.when(pl.col("retailer_id") == 101).then(100).otherwise(pl.col("retailer_id")).alias("retailer_id"))
    t["brands"] = t["brands"].with_columns(pl.when(pl.col("brand_id") == 1).then(None).otherwise(pl.col("brand_id")).alias("brand_id"))
    found = check_world(spec, t)
    dup = next(v for v in found if v.check == "pk_unique")
    assert dup.table == "retailers" and dup.example == "100" and dup.rows == 2
    assert ("brands", "pk_null") in {(v.table, v.check) for v in found}


def test_dangling_foreign_key(world):
    spec, t = world
    t["listings"] = t["listings"].with_columns(pl.when(pl.col("listing_id") == 1003).then(99999).otherwise(pl.col("model_id")).alias("model_id"))
    v = next(v for v in check_world(spec, t) if v.check == "fk_unresolved")
    assert (v.table, v.rows, v.example) == ("listings", 1, "1003") and "models.model_id" in v.detail


def test_cardinality_bounds(world):
    spec, t = world
    first = t["models"]["brand_id"][0]
    t["models"] = t["models"].filter(pl.col("brand_id") != first)
    assert ("models", "cardinality") in checks(spec, t)


def test_rank_that_disagrees_with_its_values(world):
    spec, t = world
    b = t["brands"].sort("market_rank")
    swapped = b.with_columns(pl.col("market_rank").reverse())
    t["brands"] = swapped
    assert ("brands", "monotone") in checks(spec, t)


def test_declared_unique_range_and_check(world):
    spec, t = world
    names = t["retailers"]["name"].to_list()
    names[1] = names[0]
    t["retailers"] = t["retailers"].with_columns(pl.Series("name", names))
    t["brands"] = t["brands"].with_columns((pl.col("market_share_pct") + 100).alias("market_share_pct"))
    t["models"] = t["models"].with_columns(pl.col("announced").alias("launch_date").dt.offset_by("-1d"))
    found = checks(spec, t)
    assert {("retailers", "unique"), ("brands", "range"), ("models", "check")} <= found


def test_parent_lookup_in_a_check(world):
    spec, t = world
    t["listings"] = t["listings"].with_columns(pl.col("price_usd") * 10)
    v = [v for v in check_world(spec, t) if v.check == "check"]
    assert v and v[0].table == "listings"


def test_row_budget_and_missing_table(world):
    spec, t = world
    t["listings"] = t["listings"].head(10)
    assert ("*", "row_budget") in checks(spec, t)
    del t["retailers"]
    assert checks(spec, t) == {("retailers", "missing_table")}

import duckdb
import polars as pl
import pytest

from tests.conftest import BUNDLED
from worldforge.errors import WarehouseError
from worldforge.spec import spec_hash
from worldforge.synth import build_world
from worldforge.warehouse import Warehouse, duck, read_world, write_world
from worldforge.world import check_world_file


@pytest.mark.parametrize("name", BUNDLED)
def test_round_trip_with_declared_keys(specs, tmp_path, name):
    spec = specs[name]
    tables = build_world(spec, 21)
    path = write_world(spec, tables, Warehouse(tmp_path), seed=21)
    assert path == tmp_path / f"{name}.duckdb"
    wf = read_world(path)
    for t, frame in tables.items():
        assert wf.tables[t].equals(frame), t
    declared = {(r["table_name"], r["constraint_type"], r["columns"], r["referenced_table"]) for r in wf.declared.iter_rows(named=True)}
    for t, table in spec.tables.items():
        assert (t, "PRIMARY KEY", table.primary_key, None) in declared
        for ref_name, ref in table.references.items():
            assert (t, "FOREIGN KEY", ref_name, ref.parent) in declared
    assert wf.meta["seed"] == 21 and wf.meta["world"] == name and wf.meta["target_year"] == spec.target_year
    assert wf.meta["spec_hash"] == spec_hash(spec) and wf.spec == spec
    assert wf.meta["total_rows"] == sum(f.height for f in tables.values())
    assert check_world_file(path)[1] == []


def test_duckdb_enforces_the_foreign_keys(specs, tmp_path):
    path = write_world(specs["smartphones_2029"], build_world(specs["smartphones_2029"]), Warehouse(tmp_path))
    con = duckdb.connect(str(path))
    with pytest.raises(duckdb.ConstraintException, match="foreign key"):
        con.execute("INSERT INTO listings (listing_id, model_id, retailer_id) VALUES (1, 123456, 100)")
    with pytest.raises(duckdb.ConstraintException):
        con.execute("INSERT INTO brands (brand_id, name) SELECT brand_id, 'dup' FROM brands LIMIT 1")
    comment = con.execute("SELECT comment FROM duckdb_columns() WHERE table_name = 'models' AND column_name = 'shipments_k'").fetchone()[0]
    assert comment == "unit: thousand units"
    con.close()


def test_a_failed_write_leaves_the_previous_file(specs, tmp_path, monkeypatch):
    spec = specs["mars_colony_2030"]
    path = write_world(spec, build_world(spec, 1), Warehouse(tmp_path), seed=1)
    before = path.read_bytes()

    calls = []

    def failing_insert(con, table, frame):
        calls.append(table)
        if len(calls) == 3:
            raise OSError("disk full (simulated)")
        return real_insert(con, table, frame)

    real_insert = duck.insert_frame
    monkeypatch.setattr("worldforge.warehouse.worlds.insert_frame", failing_insert)
    with pytest.raises(OSError, match="disk full"):
        write_world(spec, build_world(spec, 2), Warehouse(tmp_path), seed=2)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary files left
    assert read_world(path).meta["seed"] == 1


def test_a_world_breaking_a_key_is_not_written(specs, tmp_path):
    spec = specs["smartphones_2029"]
    tables = build_world(spec)
    tables["listings"] = tables["listings"].with_columns(pl.lit(999999).alias("model_id"))
    with pytest.raises(duckdb.ConstraintException):
        write_world(spec, tables, Warehouse(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_check_reports_missing_ddl_and_bad_rows(specs, tmp_path):
    spec = specs["smartphones_2029"]
    path = write_world(spec, build_world(spec), Warehouse(tmp_path))
    # rebuild the file without constraints and with a dangling reference
    clone = tmp_path / "clone.duckdb"
    con = duckdb.connect(str(clone))
    con.execute(f"ATTACH '{path}' AS src (READ_ONLY)")
    for t in ["_world", *spec.tables]:
        con.execute(f'CREATE TABLE "{t}" AS SELECT * FROM src."{t}"')
    con.execute("UPDATE listings SET model_id = 777777 WHERE listing_id = 1000")
    con.close()
    _, violations = check_world_file(clone)
    kinds = {(v.table, v.check) for v in violations}
    assert ("listings", "fk_unresolved") in kinds
    assert ("listings", "ddl_foreign_key") in kinds and ("brands", "ddl_primary_key") in kinds


def test_read_world_errors(tmp_path):
    with pytest.raises(WarehouseError, match="no such DuckDB file"):
        read_world(tmp_path / "nope.duckdb")
    (tmp_path / "text.duckdb").write_text("hello")
    with pytest.raises(WarehouseError, match="cannot open as DuckDB"):
        read_world(tmp_path / "text.duckdb")
    duckdb.connect(str(tmp_path / "other.duckdb")).execute("CREATE TABLE x (a INT)").close()
    with pytest.raises(WarehouseError, match="not a worldforge world"):
        read_world(tmp_path / "other.duckdb")


def test_a_store_is_never_taken_for_a_world(tmp_path):
    """``<warehouse>/catalog.duckdb`` is the world catalog: a command given ``catalog`` as a world says so
    in one line and reads nothing (a world file of that name would have replaced the store)."""
    from typer.testing import CliRunner

    from worldforge.cli import app
    from worldforge.warehouse.layout import STORES, Warehouse

    for store in STORES:
        with pytest.raises(WarehouseError, match="is not a world"):
            Warehouse.of(tmp_path).world(store.removesuffix(".duckdb"))
    assert Warehouse.of(tmp_path).world("catalogue") == tmp_path / "catalogue.duckdb"
    result = CliRunner().invoke(app, ["corpus", "build", "trajectories", "--warehouse", str(tmp_path)])
    assert result.exit_code == 2 and "is the warehouse's trajectory store" in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_world_file_keeps_small_blocks_through_every_step(world, tmp_path):
    """World files are written in DuckDB's 16 KiB blocks (a quarter of the size in 256 KiB ones), and the corpus
    and task steps, which add to the file in place, keep them; the content does not depend on the block size."""
    import duckdb

    from worldforge.warehouse.duck import atomic_duckdb
    from worldforge.warehouse.worlds import WORLD_BLOCK_SIZE, content_digests

    _, path = world  # tables, scenarios, corpus and tasks written
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0] == WORLD_BLOCK_SIZE == 16384
    finally:
        con.close()
    wide = tmp_path / "wide.duckdb"
    with atomic_duckdb(wide) as out:  # the same tables in the default 256 KiB blocks
        out.execute(f"ATTACH '{path}' AS src (READ_ONLY)")
        out.execute(f"COPY FROM DATABASE src TO {out.execute('SELECT current_database()').fetchone()[0]}")
        out.execute("DETACH src")
    assert content_digests(wide) == content_digests(path)
    assert path.stat().st_size * 2.5 < wide.stat().st_size, (path.stat().st_size, wide.stat().st_size)


def test_long_text_columns_are_stored_with_zstd(world, tmp_path):
    """The page text and the task JSON are declared ``USING COMPRESSION zstd``: DuckDB's default (FSST on each
    string) keeps little of the repetition across pages that zstd finds, so the same rows in default columns
    take much more room; SQL reads them unchanged."""
    import duckdb

    from worldforge.warehouse.duck import atomic_duckdb

    _, path = world
    con = duckdb.connect(str(path), read_only=True)
    try:
        stored = dict(con.execute(
            "SELECT table_name || '.' || column_name, any_value(compression) FROM ("
            "  SELECT 'corpus_pages' AS table_name, * FROM pragma_storage_info('corpus_pages') UNION ALL "
            "  SELECT 'search_tasks', * FROM pragma_storage_info('search_tasks')) "
            "WHERE segment_type = 'VARCHAR' GROUP BY ALL").fetchall())
        assert con.execute("SELECT count(*) FROM corpus_pages WHERE body_md ILIKE '%smartphone%'").fetchone()[0] > 0
    finally:
        con.close()
    for column in ("corpus_pages.body_md", "corpus_pages.chrome", "corpus_pages.lead", "search_tasks.gold_json",
                   "search_tasks.provenance_json", "search_tasks.question"):
        assert stored[column] == "ZSTD", (column, stored)
    assert stored["corpus_pages.world"] != "ZSTD"  # short repeated values stay in DuckDB's own encodings

    plain = tmp_path / "plain.duckdb"  # the same rows, 16 KiB blocks, columns without a compression clause
    alias = "plain_source"  # the writer connection is shared: a name of its own
    with atomic_duckdb(plain, block_size=16384) as out:
        out.execute(f"ATTACH '{path}' AS {alias} (READ_ONLY)")
        for table in ("corpus_pages", "search_tasks"):
            out.execute(f"CREATE TABLE {table} AS SELECT * FROM {alias}.{table}")
        out.execute(f"DETACH {alias}")
    texts = tmp_path / "zstd.duckdb"  # the same rows in the world's own declarations
    alias = "zstd_source"
    with atomic_duckdb(texts, block_size=16384) as out:
        out.execute(f"ATTACH '{path}' AS {alias} (READ_ONLY)")
        for table in ("corpus_pages", "search_tasks"):
            ddl = out.execute("SELECT sql FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' "
                              "AND table_name = ?", [alias, table]).fetchone()[0]
            out.execute(ddl)
            out.execute(f"INSERT INTO {table} SELECT * FROM {alias}.{table}")
        out.execute(f"DETACH {alias}")
    assert texts.stat().st_size * 1.5 < plain.stat().st_size, (texts.stat().st_size, plain.stat().st_size)

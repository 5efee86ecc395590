"""`worldforge sql` is a sandbox: one read-only query over the file's own tables, nothing else."""

import duckdb
import pytest
from typer.testing import CliRunner

from worldforge.cli import app
from worldforge.errors import WarehouseError
from worldforge.warehouse.duck import open_sandboxed, query_readonly

SECRET = "top secret line"


@pytest.fixture
def wh(tmp_path):
    """A warehouse folder with a small DuckDB file `tiny.duckdb`, a secret file beside it and another DuckDB file."""
    wh = tmp_path / "wh"
    wh.mkdir()
    con = duckdb.connect(str(wh / "tiny.duckdb"))
    con.execute("CREATE TABLE items (item_id INTEGER PRIMARY KEY, name VARCHAR)")
    con.execute("INSERT INTO items VALUES (1, 'alpha'), (2, 'beta'), (3, 'gamma')")
    con.execute("CREATE VIEW v_items AS SELECT name FROM items WHERE item_id > 1")
    con.close()
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    (tmp_path / "secret.csv").write_text("a,b\n1,2\n")
    other = duckdb.connect(str(tmp_path / "other.duckdb"))
    other.execute("CREATE TABLE t AS SELECT 42 AS x")
    other.execute(f"COPY t TO '{tmp_path / 'secret.parquet'}' (FORMAT parquet)")
    other.close()
    return wh


def run_sql(wh, query, name="tiny"):
    """Invoke `worldforge sql NAME QUERY -w WH`."""
    return CliRunner().invoke(app, ["sql", name, query, "-w", str(wh)])


def flat(r):
    """The output with every run of whitespace as one space (rich wraps a narrow table's title)."""
    return " ".join(r.output.split())


def assert_refused(r, *needles):
    """Exit status 2, one `error:` line, no traceback, each needle in the message."""
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), r.output
    assert "Traceback" not in r.output
    for needle in needles:
        assert needle in r.output, r.output


def listing(folder):
    """Every entry below ``folder``, relative, with file contents."""
    return {p.relative_to(folder): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def test_a_normal_select_still_works(wh):
    r = run_sql(wh, "SELECT item_id, name FROM items ORDER BY item_id")
    assert r.exit_code == 0, r.output
    assert "alpha" in r.output and "gamma" in r.output and "tiny.duckdb: 3 row(s)" in flat(r)
    for query in ("FROM v_items", "SHOW TABLES", "DESCRIBE items", "SUMMARIZE items", "WITH q AS (SELECT 1 AS one) SELECT * FROM q",
                  "SELECT view_name FROM duckdb_views() WHERE NOT internal", "EXPLAIN SELECT * FROM items", "EXPLAIN ANALYZE SELECT count(*) FROM items",
                  "PIVOT items ON item_id IN (1, 2) USING first(name)", "SELECT * FROM pragma_table_info('items')", "SELECT * FROM query_table('items')"):
        r = run_sql(wh, query)
        assert r.exit_code == 0 and "row(s)" in flat(r), (query, r.output)


FILE_READS = [
    "SELECT * FROM read_text('{tmp}/secret.txt')",
    "SELECT * FROM read_blob('{tmp}/secret.txt')",
    "SELECT * FROM read_csv_auto('{tmp}/secret.csv')",
    "SELECT * FROM read_csv('{tmp}/secret.csv')",
    "SELECT * FROM '{tmp}/secret.csv'",
    "SELECT * FROM read_json_auto('{tmp}/secret.txt')",
    "SELECT * FROM read_parquet('{tmp}/secret.parquet')",
    "SELECT * FROM parquet_metadata('{tmp}/secret.parquet')",
    "SELECT * FROM glob('{tmp}/*')",
    "SELECT * FROM sniff_csv('{tmp}/secret.csv')",
    "SELECT * FROM read_text('/etc/passwd')",
]


@pytest.mark.parametrize("query", FILE_READS)
def test_no_other_file_can_be_read(wh, query):
    r = run_sql(wh, query.format(tmp=wh.parent))
    assert_refused(r, "refused", "disabled by configuration")
    shown = " ".join(r.output.split()).replace(str(wh.parent), "")  # the refusal names the path, which may hold "42" (pytest-42)
    assert SECRET not in r.output and "42" not in shown


def test_a_view_reading_a_file_is_refused_too(wh):
    con = duckdb.connect(str(wh / "evil.duckdb"))
    con.execute(f"CREATE VIEW v AS SELECT * FROM read_text('{wh.parent / 'secret.txt'}')")
    con.close()
    r = run_sql(wh, "SELECT * FROM v", name="evil")
    assert_refused(r, "refused")
    assert SECRET not in r.output


REFUSED_STATEMENTS = {
    "ATTACH '{tmp}/other.duckdb' AS o": "ATTACH",
    "ATTACH ':memory:' AS m": "ATTACH",
    "DETACH tiny": "DETACH",
    "COPY items TO '{tmp}/out.csv'": "COPY",
    "COPY (SELECT 1) TO '{tmp}/out.parquet' (FORMAT parquet)": "COPY",
    "COPY items FROM '{tmp}/secret.csv'": "COPY",
    "EXPORT DATABASE '{tmp}/dump'": "EXPORT",
    "SET enable_external_access = true": "SET",
    "SET memory_limit = '100GB'": "SET",
    "SET threads = 64": "SET",
    "RESET memory_limit": "SET",
    "SET lock_configuration = false": "SET",
    "PRAGMA memory_limit = '100GB'": "SET",
    "PRAGMA enable_profiling": "PRAGMA",
    "INSTALL httpfs": "INSTALL / LOAD",
    "LOAD httpfs": "INSTALL / LOAD",
    "CREATE TABLE evil (x INTEGER)": "CREATE",
    "CREATE TEMP TABLE evil AS SELECT 1": "CREATE",
    "CREATE MACRO m() AS 1": "CREATE",
    "INSERT INTO items VALUES (9, 'evil')": "INSERT",
    "UPDATE items SET name = 'evil'": "UPDATE",
    "DELETE FROM items": "DELETE",
    "DROP TABLE items": "DROP",
    "ALTER TABLE items ADD COLUMN x INTEGER": "ALTER",
    "CHECKPOINT": "CALL",
    "CALL pragma_version()": "CALL",
    "USE memory": "SET",
    "EXPLAIN ANALYZE CREATE TEMP TABLE evil AS SELECT 1": "EXPLAIN of anything but a SELECT",
    "EXPLAIN ANALYZE COPY items TO '{tmp}/out.csv'": "EXPLAIN of anything but a SELECT",
    "SELECT 1; COPY items TO '{tmp}/out.csv'": "one statement at a time",
}


@pytest.mark.parametrize("query", list(REFUSED_STATEMENTS))
def test_statements_that_write_or_reconfigure_are_refused(wh, query):
    before = listing(wh.parent)
    r = run_sql(wh, query.format(tmp=wh.parent))
    assert_refused(r, REFUSED_STATEMENTS[query])
    if REFUSED_STATEMENTS[query] != "one statement at a time":
        assert "is opened read-only" in r.output
    assert listing(wh.parent) == before  # nothing written, the file itself unchanged


def test_the_sandbox_holds_even_without_the_statement_check(wh):
    """The connection itself refuses what the statement check refuses first (defence in depth)."""
    con = open_sandboxed(wh / "tiny.duckdb")
    try:
        settings = dict(con.execute("SELECT name, value FROM duckdb_settings()").fetchall())
        assert settings["enable_external_access"] == "false" and settings["lock_configuration"] == "true"
        assert settings["access_mode"] == "read_only" and settings["threads"] == "2" and settings["temp_directory"] == ""
        assert settings["autoload_known_extensions"] == "false" and settings["autoinstall_known_extensions"] == "false"
        for stmt in ("SET enable_external_access = true", "SET memory_limit = '100GB'", "SET lock_configuration = false"):
            with pytest.raises(duckdb.InvalidInputException, match="locked"):
                con.execute(stmt)
        for stmt in (f"ATTACH '{wh.parent / 'other.duckdb'}' AS o", f"COPY items TO '{wh.parent / 'out.csv'}'",
                     f"EXPORT DATABASE '{wh.parent / 'dump'}'", "LOAD httpfs"):
            with pytest.raises(duckdb.PermissionException):
                con.execute(stmt)
        with pytest.raises(duckdb.Error, match="read-only"):
            con.execute("CREATE TABLE evil (x INTEGER)")
    finally:
        con.close()
    assert not (wh.parent / "out.csv").exists() and not (wh.parent / "dump").exists()


def test_a_query_past_the_memory_limit_is_a_clear_error(wh):
    before = listing(wh.parent)
    r = run_sql(wh, "SELECT list(a.range) FROM range(10000000) a CROSS JOIN range(1000) b")
    assert_refused(r, "needs more memory", "1GB", "Out of Memory")
    assert listing(wh.parent) == before  # nothing spilled to disk


def test_a_query_past_the_time_limit_is_stopped(wh):
    r = CliRunner().invoke(app, ["sql", "tiny", "SELECT count(*) FROM range(1000000000000)", "--timeout", "0.5", "-w", str(wh)])
    assert_refused(r, "longer than 0.5 s")


def test_names_are_not_paths(wh):
    for name in ("../wh/tiny", "/etc/passwd", ".hidden", "a/b"):
        assert_refused(run_sql(wh, "SELECT 1", name=name), "not a path")
    assert_refused(run_sql(wh, "SELECT 1", name="missing"), "no such DuckDB file")


def test_empty_and_broken_queries(wh):
    assert_refused(run_sql(wh, "   -- nothing"), "no SQL statement")
    assert_refused(run_sql(wh, "SELEC 1"), "syntax error")
    assert_refused(run_sql(wh, "SELECT * FROM nope"), "nope")


def test_query_readonly_direct(wh):
    frame, more = query_readonly(wh / "tiny.duckdb", "SELECT * FROM items ORDER BY item_id", 2)
    assert frame["name"].to_list() == ["alpha", "beta"] and more
    with pytest.raises(WarehouseError, match="COPY statements are refused"):
        query_readonly(wh / "tiny.duckdb", "COPY items TO 'x.csv'", 2)


def test_the_documented_views_work_in_the_sandbox(world):
    wh, _ = world
    queries = [
        "SELECT view_name, comment FROM duckdb_views() WHERE NOT internal",
        "SELECT name, shipments_k, market_share_pct FROM brands ORDER BY market_rank LIMIT 5",
        "SELECT table_name, row_key, column_name, value_text, section FROM v_facts WHERE url = (SELECT min(url) FROM v_pages WHERE page_type = 'ranking')",
        "SELECT r.instance_id, m.name FROM v_task_rows r JOIN models m ON r.table_name = 'models' AND r.row_key = CAST(m.model_id AS VARCHAR) LIMIT 10",
        "SELECT * FROM v_columns LIMIT 3",
        "SELECT * FROM v_tasks LIMIT 3",
        "SELECT * FROM _world",
    ]
    for query in queries:
        r = CliRunner().invoke(app, ["sql", "smartphones_2029", query, "-w", str(wh)])
        assert r.exit_code == 0 and "row(s)" in flat(r) and ": 0 row(s)" not in flat(r), (query, r.output)

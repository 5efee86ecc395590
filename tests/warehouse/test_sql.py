import duckdb
from typer.testing import CliRunner

from worldforge.cli import app


def test_documented_views(world):
    _, path = world
    con = duckdb.connect(str(path), read_only=True)
    views = dict(con.execute("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall())
    assert set(views) == {"v_columns", "v_references", "v_pages", "v_facts", "v_claims", "v_tasks", "v_task_rows"} and all(views.values())
    refs = con.execute("SELECT table_name, column_name, parent_table, shape FROM v_references").fetchall()
    assert ("models", "brand_id", "brands", "reference") in refs
    # derived claims: their own kinds, each with the cells it is computed from
    kinds = dict(con.execute("SELECT kind, count(*) FROM v_claims GROUP BY kind").fetchall())
    assert {"rank", "count"} <= set(kinds) and con.execute("SELECT count(*) FROM v_claims WHERE basis IS NULL").fetchall()[0][0] == 0
    # which facts does a page state / which pages state a row
    url = con.execute("SELECT url FROM v_pages WHERE page_type = 'ranking' AND scenario IS NULL ORDER BY url LIMIT 1").fetchall()[0][0]
    n = con.execute("SELECT count(*) FROM v_facts WHERE url = ?", [url]).fetchall()[0][0]
    assert n == con.execute("SELECT facts FROM v_pages WHERE url = ?", [url]).fetchall()[0][0] > 0
    # which tasks need a given row: v_task_rows joined back to the table
    rows = con.execute(
        "SELECT count(*) FROM v_task_rows r JOIN models m ON r.table_name = 'models' AND r.row_key = CAST(m.model_id AS VARCHAR) WHERE r.scenario IS NULL"
    ).fetchall()[0][0]
    assert rows == con.execute("SELECT sum(gold_rows) FROM v_tasks WHERE source_table = 'models' AND scenario IS NULL").fetchall()[0][0]
    units = dict(con.execute("SELECT column_name, comment FROM v_columns WHERE table_name = 'models' AND comment IS NOT NULL").fetchall())
    assert units["battery_mah"] == "unit: mAh"
    con.close()


def test_sql_command_is_read_only(world):
    wh, path = world
    runner = CliRunner()
    r = runner.invoke(app, ["sql", "smartphones_2029", "SELECT name, market_rank FROM brands ORDER BY market_rank", "--limit", "2", "-w", str(wh)])
    assert r.exit_code == 0 and "market_rank" in r.output and "more not shown" in r.output
    before = path.read_bytes()
    r = runner.invoke(app, ["sql", "smartphones_2029", "DELETE FROM brands", "-w", str(wh)])
    assert r.exit_code == 2 and "opened read-only" in r.output
    assert path.read_bytes() == before
    r = runner.invoke(app, ["sql", "smartphones_2029", "SELEC 1", "-w", str(wh)])
    assert r.exit_code == 2 and "syntax error" in r.output and "Traceback" not in r.output

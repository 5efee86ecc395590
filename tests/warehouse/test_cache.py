"""The world caches' bound: the process's (``WORLDFORGE_OPEN_WORLDS``, applied by the edges), never read below them."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from worldforge.warehouse import cache


@pytest.fixture(autouse=True)
def _restore_bound():
    before = cache._bound
    yield
    cache._bound = before
    for c in list(cache._caches):
        c._resize()


def _filled(tmp_path, c: cache.FileCache, n: int) -> list:
    files = []
    for i in range(n):
        f = tmp_path / f"w{i}.duckdb"
        f.write_text(str(i))
        c.get(f, "pages", lambda i=i: i)
        files.append(f)
    return files


def test_a_cache_takes_the_process_bound_and_drops_the_least_recently_used_when_it_shrinks(tmp_path):
    cache.set_open_worlds(5)
    c: cache.FileCache[int] = cache.FileCache()
    files = _filled(tmp_path, c, 5)
    assert len(c) == 5 and c.maxsize == 5
    c.get(files[0], "pages", lambda: pytest.fail("cached: not loaded again"))  # w0 is now the most recently used
    cache.set_open_worlds(2)
    assert len(c) == 2 and c.maxsize == 2
    assert sorted(key for key, _ in c._items) == [str(files[0]), str(files[4])]
    cache.set_open_worlds(3)  # growing keeps what is there
    assert len(c) == 2 and c.maxsize == 3


def test_a_cache_with_its_own_size_keeps_it(tmp_path):
    own: cache.FileCache[int] = cache.FileCache(maxsize=4)
    _filled(tmp_path, own, 4)
    cache.set_open_worlds(1)
    assert len(own) == 4 and own.maxsize == 4
    with pytest.raises(ValueError, match="at least 1"):
        cache.set_open_worlds(0)


def test_the_library_never_reads_the_setting(monkeypatch):
    monkeypatch.setenv("WORLDFORGE_OPEN_WORLDS", "3")
    cache._bound = None
    assert cache.FileCache().maxsize == cache.default_open_worlds() >= 32


def test_the_cli_applies_the_setting(monkeypatch):
    from worldforge.cli import app

    monkeypatch.setenv("WORLDFORGE_OPEN_WORLDS", "7")
    cache._bound = None
    result = CliRunner().invoke(app, ["settings"])
    assert result.exit_code == 0, result.output
    assert cache.open_worlds() == 7


def test_an_environment_a_trainer_builds_applies_the_setting(monkeypatch, tmp_path):
    from worldforge.rl.env import SearchWorldEnv

    monkeypatch.setenv("WORLDFORGE_OPEN_WORLDS", "9")
    cache._bound = None
    SearchWorldEnv(warehouse=tmp_path, record=False)
    assert cache.open_worlds() == 9 and cache.open_worlds_set()
    monkeypatch.setenv("WORLDFORGE_OPEN_WORLDS", "4")  # once a process: a server's edge applied it, or the first environment
    SearchWorldEnv(warehouse=tmp_path, record=False)
    assert cache.open_worlds() == 9

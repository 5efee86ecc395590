"""Benchmark: a catalog of N worlds (default 1,000) built end to end on K worker processes.

worldforge path: ``build_catalog`` (worldforge/catalog/build.py) over N generated specs — per world the
Dagster assets' steps (tables, scenarios, corpus + fact check, indexes, tasks, oracle suite) on a
forkserver pool, one ``catalog.duckdb`` row per world as it finishes.

Specs: ``worldforge.catalog.generate.generate_catalog(n, seed, out_dir)`` when it exists; with
``--from-dir DIR`` (or without the generator) copies of DIR's specs with other world names and seeds
(``archetype`` = the source spec's world).

Baseline, measured in the same run: the same steps one world after another in one process
(``build_world_entry``) over a sample of the same specs (``--baseline``, default 10), extrapolated to N.
Figures: wall time, worlds/min, peak RSS of the whole process tree (parent + workers, sampled),
warehouse size on disk, parallel speedup (sum of the per-world build_s over the wall time) and the
ratio against the baseline. Target (issue 14): 1,000 worlds in under 30 minutes.

Usage: python bench/catalog.py [--n 1000] [--seed 0] [--workers K] [--from-dir world_specs] [--baseline 10] [--keep DIR]
                               [--engines process,ray] [--address HOST:PORT]

``--engines process,ray`` builds the same specs on the process pool, then as Ray tasks (a local cluster started
for the build, its start-up counted in the wall time), and prints ``ratio ray/process``.

The first engine's catalog is then exported in BrowseComp-Plus's layout (``worldforge export browsecomp-plus``): its
documents and queries, and how many worlds reach the benchmark's scale (100,195 documents, 830 queries;
texttron/BrowseComp-Plus).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.catalog.build import build_catalog, build_world_entry, catalog_specs, default_workers  # noqa: E402
from worldforge.warehouse import Warehouse  # noqa: E402

TARGET_N, TARGET_S = 1000, 20 * 60  # issue 31: 1,000 worlds end to end in 20 min on this machine's 2 cores
TARGET_MIB = 4.0  # issue 31: warehouse storage per world, on average over the catalog
BCP_DOCS, BCP_QUERIES = 100_195, 830  # BrowseComp-Plus (texttron/BrowseComp-Plus): its corpus and its queries (issue 32)


def copies_of(src: Path, n: int, seed: int, out: Path) -> None:
    """``n`` specs from ``src``'s: the i-th is spec ``i mod len`` with world ``<world>_c<i>`` and seed ``seed*100003 + i``."""
    docs = [yaml.safe_load(p.read_text()) for p in catalog_specs(src)]
    out.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        doc = dict(docs[i % len(docs)])
        doc.update(world=f"{doc['world']}_c{i:04d}", seed=seed * 100003 + i, archetype=doc.get("archetype") or doc["world"])
        (out / f"{doc['world']}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


def make_specs(n: int, seed: int, from_dir: Path | None, out: Path) -> str:
    """Write the specs; returns how they were made."""
    if from_dir is None:
        try:
            from worldforge.catalog.generate import generate_catalog
        except ImportError:
            from_dir = ROOT / "world_specs"
        else:
            generate_catalog(n, seed, out)
            return f"generate_catalog({n}, seed={seed})"
    copies_of(from_dir, n, seed, out)
    return f"{n} copies of the specs in {from_dir} with other names and seeds"


class TreeRSS:
    """Samples the resident memory of this process and all its descendants; keeps the peak, overall and by phase
    (the caller sets :attr:`phase`: here the quarter of the build's worlds done, so a peak that grows with N shows)."""

    def __init__(self, every_s: float = 0.25):
        """Start sampling every ``every_s`` seconds."""
        self.peak, self.every, self._stop = 0, every_s, threading.Event()
        self.phase, self.by_phase = 0, {}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> int:
        try:
            import psutil
        except ImportError:
            return _proc_tree_rss(os.getpid())
        me = psutil.Process()
        total = 0
        for p in [me, *me.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            got = self._sample()
            self.peak = max(self.peak, got)
            self.by_phase[self.phase] = max(self.by_phase.get(self.phase, 0), got)
            self._stop.wait(self.every)

    def stop(self) -> int:
        """Stop sampling; returns the peak in bytes."""
        self._stop.set()
        self._thread.join()
        return self.peak


def _proc_tree_rss(root: int) -> int:
    """RSS of ``root`` and its descendants from /proc (without psutil)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(stat[1]), []).append(int(d.name))
            rss[int(d.name)] = int((d / "statm").read_text().split()[1]) * page
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def du(path: Path) -> int:
    """Bytes of the file ``path``, or of the files under the folder ``path`` (0 when there is nothing)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def run_engine(engine: str, specs: Path, wh: Path, workers: int, n: int, address: str | None):
    """Build the catalog on one engine and print its figures; returns ``(result, wall seconds)``."""
    rss = TreeRSS()
    done = [0]

    def tick(row, outcome):
        done[0] += 1
        rss.phase = min(3, 4 * done[0] // max(n, 1))
        if done[0] % max(1, n // 20) == 0 or outcome == "failed":
            print(f"  {done[0]}/{n} {outcome} {row.world} {row.build_s:.1f} s {row.error or ''}"[:200], flush=True)

    t0 = time.perf_counter()
    result = build_catalog(specs, Warehouse(wh), workers=workers, progress=tick, engine=engine, address=address)
    wall = time.perf_counter() - t0  # Ray's start-up (a local cluster) included
    peak = rss.stop()
    per = [r.build_s for r in result.rows]
    print(f"worldforge [{engine}]: {len(result.rows)} worlds on {result.workers} {'Ray tasks in flight at most' if engine == 'ray' else 'workers'} "
          f"in {wall / 60:.1f} min ({60 * len(result.rows) / wall:.1f} worlds/min); built {result.built}, failed {len(result.failed)}")
    if result.failed:  # a failed world is a generator bug: which archetypes, and how many of each
        by_arch: dict[str, list[int]] = {}
        for r in result.rows:
            by_arch.setdefault(r.archetype or "(hand-written)", [0, 0])[r.status != "built"] += 1
        print("  failed worlds per archetype: " + ", ".join(f"{a} {f} of {b + f}" for a, (b, f) in sorted(by_arch.items()) if f))
    if per:
        print(f"  per world build_s: mean {statistics.mean(per):.1f} s, median {statistics.median(per):.1f} s, max {max(per):.1f} s; "
              f"parallel speedup (sum build_s / wall): {sum(per) / wall:.2f}x")
    print(f"  peak RSS of the process tree: {peak / 2**20:.0f} MiB{' (the local Ray cluster included)' if engine == 'ray' and not address else ''}; "
          f"warehouse on disk: {du(wh) / 2**30:.2f} GiB ({du(wh) / max(n, 1) / 2**20:.1f} MiB per world)")
    print("  peak RSS by quarter of the worlds done: " + ", ".join(f"{25 * q}-{25 * q + 25}% {rss.by_phase[q] / 2**20:.0f} MiB"
                                                                 for q in sorted(rss.by_phase)))
    eps = du(wh / "episodes") + du(wh / "catalog_episodes")  # the episode store (catalog_episodes/: before issue 30)
    print(f"  episodes on disk: {eps / 2**20:.1f} MiB ({eps / max(n, 1) / 2**20:.2f} MiB per world)")
    return result, wall


def storage(wh: Path, n: int, sample: int = 10) -> float:
    """Print the warehouse's bytes per world by part, and the world files against DuckDB's defaults; returns MiB per world.

    The baseline is measured here, on ``sample`` of the same worlds: each world file's tables copied as they are
    (``CREATE TABLE AS``) into a file with DuckDB's default 256 KiB blocks and default compression.
    """
    import duckdb

    worlds = sorted(p for p in wh.glob("*.duckdb") if p.name != "catalog.duckdb")
    parts = {"world files (DuckDB)": sum(p.stat().st_size for p in worlds),
             "search indexes (tantivy)": sum(du(p) for p in wh.glob("*.index")),
             "task export (tasks/)": du(wh / "tasks"),
             "episodes": du(wh / "episodes"),
             "catalog.duckdb": du(wh / "catalog.duckdb")}
    total = du(wh)
    print(f"storage: {total / max(n, 1) / 2**20:.2f} MiB per world over {n} worlds ({total / 2**30:.2f} GiB); per world by part: "
          + ", ".join(f"{k} {v / max(n, 1) / 2**20:.2f}" for k, v in parts.items()))
    ours = default = 0
    for p in worlds[:: max(1, len(worlds) // sample)][:sample]:
        copy = p.with_name(f".{p.stem}.default.duckdb")
        con = duckdb.connect()
        try:
            con.execute(f"ATTACH '{p}' AS src (READ_ONLY)")
            con.execute(f"ATTACH '{copy}' AS dst")
            for schema, table in con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'src'").fetchall():
                con.execute(f'CREATE SCHEMA IF NOT EXISTS dst."{schema}"')
                con.execute(f'CREATE TABLE dst."{schema}"."{table}" AS SELECT * FROM src."{schema}"."{table}"')
            con.execute("DETACH dst")
        finally:
            con.close()
        ours, default = ours + p.stat().st_size, default + copy.stat().st_size
        copy.unlink()
    if ours:
        print(f"  world files: {ours / 2**20:.1f} MiB for {min(sample, len(worlds))} worlds against {default / 2**20:.1f} MiB with DuckDB's "
              f"defaults (256 KiB blocks, no zstd columns), same run: ratio default/worldforge {default / ours:.2f}x")
    return total / max(n, 1) / 2**20


def browsecomp_plus_scale(wh: Path, out: Path) -> None:
    """Export the catalog's deep questions and corpora as BrowseComp-Plus reads them; print its size against the benchmark's."""
    import math

    from worldforge.datasets.browsecomp_plus import export_browsecomp_plus

    warehouse = Warehouse(wh)
    names = [p.stem for p in warehouse.world_files()]
    t0 = time.perf_counter()
    ex = export_browsecomp_plus(warehouse, names, out)
    took = time.perf_counter() - t0
    per_doc, per_q = ex.documents / len(ex.worlds), ex.queries / len(ex.worlds)
    need = max(math.ceil(BCP_DOCS / per_doc), math.ceil(BCP_QUERIES / per_q))
    reached = ex.documents >= BCP_DOCS and ex.queries >= BCP_QUERIES
    print(f"BrowseComp-Plus export: {ex.documents:,} documents, {ex.queries:,} queries ({ex.evidence:,} evidence and {ex.gold:,} gold qrels) "
          f"from {len(ex.worlds)} worlds in {took:.1f} s, {du(out) / 2**20:.0f} MiB; {per_doc:.0f} documents and {per_q:.1f} queries a world: "
          f"the benchmark's scale ({BCP_DOCS:,} documents, {BCP_QUERIES} queries) takes {need} worlds{' (reached here)' if reached else ''}")


def main() -> int:
    """Run the benchmark; exit status 0 when the target is met (or extrapolated to be), 1 otherwise."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=TARGET_N)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--from-dir", type=Path, default=None)
    ap.add_argument("--baseline", type=int, default=10, help="specs built one by one in one process (0: no baseline)")
    ap.add_argument("--keep", type=Path, default=None, help="build into this folder and keep it")
    ap.add_argument("--no-fail", action="store_true", help="exit 0 on a MISS")
    ap.add_argument("--small", action="store_true", help="a check that the bench runs (seconds, make test), not the figures")
    ap.add_argument("--engines", type=lambda v: v.split(","), default=["process"],
                    help="engines to build the same specs on, in turn: process, ray or process,ray (prints their ratio)")
    ap.add_argument("--address", default=None, help="--engines ray: the cluster to join (default: a local cluster per build)")
    args = ap.parse_args()
    if args.small:
        args.n, args.baseline = 4, 1
    workers = args.workers or default_workers()
    base = Path(tempfile.mkdtemp(prefix="bench-catalog-")) if args.keep is None else args.keep
    specs = base / "specs"
    try:
        how = make_specs(args.n, args.seed, args.from_dir, specs)
        files = catalog_specs(specs)
        print(f"{len(files)} specs: {how}")

        base_s = None
        if args.baseline:
            sample = files[:: max(1, len(files) // args.baseline)][: args.baseline]
            times = []
            for p in sample:
                t0 = time.perf_counter()
                row = build_world_entry(p, Warehouse(base / "baseline"))
                times.append(time.perf_counter() - t0)
                print(f"  baseline {row.world}: {times[-1]:.1f} s ({row.status})", flush=True)
            base_s = statistics.mean(times) * len(files)
            print(f"baseline (one process, one world after another): {statistics.mean(times):.1f} s per world over {len(sample)} "
                  f"-> {base_s / 60:.1f} min for {len(files)} worlds (extrapolated)")
            shutil.rmtree(base / "baseline", ignore_errors=True)

        walls: dict[str, float] = {}
        ok = True
        for engine in args.engines:
            result, wall = run_engine(engine, specs, base / f"warehouse-{engine}", workers, len(files), args.address)
            walls[engine] = wall
            if base_s is not None:
                print(f"ratio baseline/worldforge {engine} (wall): {base_s / wall:.2f}x")
            projected = wall * TARGET_N / max(len(files), 1)
            per_world = storage(base / f"warehouse-{engine}", len(files))
            ok = ok and projected <= TARGET_S and per_world <= TARGET_MIB and not result.failed
            print(f"target: {TARGET_N} worlds <= {TARGET_S / 60:.0f} min; {engine}: measured {len(files)} -> {projected / 60:.1f} min for {TARGET_N}"
                  f"{' (extrapolated)' if len(files) != TARGET_N else ''}, {len(result.failed)} failed")
            print(f"target: <= {TARGET_MIB:.0f} MiB per world; {engine}: {per_world:.2f} MiB per world")
            if engine == args.engines[0] and len(result.rows) > len(result.failed):
                browsecomp_plus_scale(base / f"warehouse-{engine}", base / "browsecomp-plus")
        if {"process", "ray"} <= set(walls):
            print(f"ratio ray/process (wall, same specs, same machine): {walls['ray'] / walls['process']:.2f}x "
                  f"({'the process pool is faster here' if walls['process'] < walls['ray'] else 'Ray is faster here'})")
        print("OK" if ok else "MISS")
        return 0 if ok or args.no_fail else 1
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

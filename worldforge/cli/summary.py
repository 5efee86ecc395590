"""``worldforge summary``: what a warehouse holds."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from worldforge import GENERATOR_VERSION
from worldforge.cli._common import WarehouseOpt, out, print_tally, user_errors, warehouse_of
from worldforge.tally import Tally


def summary(warehouse: WarehouseOpt = None) -> None:
    """Summarise the warehouse: worlds and rows, trajectories, turns, informative share, datasets."""
    from worldforge.summary import summarise

    with user_errors():
        s = summarise(warehouse_of(warehouse))
    table = Table(title=f"worlds in {s.path}")
    for col in ("world", "seed", "tables", "rows", "scenarios", "pages", "tasks", "generator"):
        table.add_column(col, justify="left" if col == "world" else "right")
    for w in s.worlds:
        cells = (w.seed, w.tables, w.rows, w.scenarios, "-" if w.pages is None else w.pages, "-" if w.tasks is None else w.tasks)
        made = (w.generator_version or "unknown") + (" (stale)" if w.stale else "")
        table.add_row(escape(w.world), *map(str, cells), escape(made))
    out.print(table)
    out.print(f"worlds: {len(s.worlds)} ({s.rows} rows)")
    if s.stale:
        out.print(f"stale worlds: {len(s.stale)} ({escape(', '.join(s.stale))}): built by another generator version than "
                  f"{GENERATOR_VERSION}; rebuild them (`worldforge world run SPEC`, or `worldforge catalog build` for a catalog)",
                  soft_wrap=True)
    t = s.trajectories
    share = "n/a" if t.informative_share is None else f"{t.informative_share:.1%}"
    out.print(f"trajectories: {t.trajectories} from {t.sources} sources; turns: {t.turns}; quarantined records: {t.quarantined}; "
              f"informative share: {share}")
    e = s.episodes
    if e.episodes:
        agents = ", ".join(f"{agent} {n:,}" for agent, n in e.by_agent)
        out.print(f"simulated episodes: {e.episodes:,} ({agents}); finished {e.finished:,}; F1 1.0 in {e.solved:,}")
    for name, r in s.datasets.items():
        extra = f"; loss share {r['stats']['loss_share']:.1%}" if "loss_share" in r["stats"] else ""
        extra += f"; {r['stats']['variant']} variant" if "variant" in r["stats"] else ""
        out.print(f"dataset {name}: {r['samples']} samples{extra} -> {s.path / 'datasets' / name}")
        print_tally(Tally.of(r["inputs"], r["written"], r["skipped"], unit="inputs", kept_as="written", dropped_as="skipped"))
    if s.eval_scores is not None and "domains" in s.eval_scores:
        from worldforge.agentworldbench.score import display_name

        def line(name: str, g: dict) -> str:
            nc = g.get("not_covered", 0)
            if nc and nc == g["lines"]:
                return f"  {name:<9} {g['lines']:>5} records, not covered by the backend"
            f1, total = (g.get("rules_covered") or g["rules"]).get("token_f1"), g.get("total")
            judged = f", judge total {total:.1f}" if total is not None else ""
            also = f" ({nc} not covered)" if nc else ""
            return (f"  {name:<9} {g['lines']:>5} records{also}, {g['failed'] - nc} failed; "
                    f"token F1 {'n/a' if f1 is None else f'{f1:.1f}'}{' on the covered' if nc else ''}{judged}")

        out.print(f"world-model eval per AgentWorldBench domain (worldforge eval score {s.path / 'datasets' / 'eval' / 'judged.jsonl'}):")
        for d, g in s.eval_scores["domains"].items():
            out.print(line(display_name(d), g), highlight=False)
        out.print(line("Overall", s.eval_scores["overall"]), highlight=False)
        if s.eval_scores["overall"].get("not_covered"):
            out.print("  not covered: the default grounded backend predicts only the search observations of this warehouse's "
                      "worlds; to evaluate every domain, serve a model (`vllm serve MODEL`) and set WORLDFORGE_VLLM_URL, or run "
                      "`worldforge eval run EXPORT --model URL`", highlight=False)

"""``worldforge rl dataset``: the prompt dataset of RL training (TRL's ``GRPOTrainer`` with ``environment_factory``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from worldforge.cli._common import WarehouseOpt, out, user_errors, warehouse_of

app = typer.Typer(help="Reinforcement learning in the fictional worlds: the prompt dataset of TRL's GRPOTrainer (environment_factory).",
                  no_args_is_help=True)


@app.command("dataset")
def dataset(
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Folder to write (datasets.save_to_disk; replaced atomically).")],
    worlds: Annotated[Optional[str], typer.Option("--worlds", help="Comma-separated world names (default: every world of the warehouse that has tasks).", show_default=False)] = None,
    seeds: Annotated[int, typer.Option("--seeds", help="Rows per task, seeded 0..N-1 (the seed drives the perturbations).")] = 1,
    perturbations: Annotated[Optional[str], typer.Option("--perturbations", help="Every row's perturbations: none, default, a JSON schema, or an instruction in words.", show_default=False)] = None,
    shuffle: Annotated[Optional[int], typer.Option("--shuffle", help="Shuffle the rows with this seed (default: world, task, seed order).", show_default=False)] = None,
    family: Annotated[str, typer.Option("--family", help="Task family: wide (tables, item-F1), deep (one answer, correctness) or both.")] = "wide",
    warehouse: WarehouseOpt = None,
) -> None:
    """Write the prompt rows (one per world, task and seed) for worldforge.rl.trl.SearchWorldToolEnv; load with datasets.load_from_disk."""
    from worldforge.rl.trl import write_prompt_dataset

    names = [w.strip() for w in worlds.split(",") if w.strip()] if worlds is not None else None
    with user_errors():
        written = write_prompt_dataset(out_dir, warehouse_of(warehouse), names, seeds, perturbations, shuffle, family)
    shown = sorted(set(written["world"]))
    families = Counter(written["family"])
    mix = ", ".join(f"{families[f]} {f}" for f in ("wide", "deep") if families[f])
    out.print(f"{len(written)} rows ({mix}; {len(shown)} world{'s' if len(shown) != 1 else ''}: {escape(', '.join(shown))}) → {escape(str(out_dir))}",
              soft_wrap=True)

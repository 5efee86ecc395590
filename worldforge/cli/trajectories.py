"""``worldforge trajectories ingest``/``export``: real agent trajectories into the trajectory store, and out as ATIF or OTel spans."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from worldforge.cli._common import WarehouseOpt, out, print_tally, progress, user_errors, warehouse_of

app = typer.Typer(help="Ingest real agent trajectories.", no_args_is_help=True)


@app.command("ingest")
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Trajectory files or folders (walked recursively).")],
    warehouse: WarehouseOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Read every file again, even those already ingested with the same bytes.")] = False,
    mapping: Annotated[Optional[Path], typer.Option("--mapping", "-m", help="A YAML mapping (JMESPath expressions) to read a format no reader knows; every file is read with it.", show_default=False)] = None,
    max_record_mb: Annotated[Optional[float], typer.Option("--max-record-mb", min=0.001, help="Quarantine records larger than this (MiB); default: WORLDFORGE_MAX_RECORD_MB, 16.", show_default=False)] = None,
) -> None:
    """Read trajectory files of any supported format into WAREHOUSE/trajectories.duckdb."""
    from worldforge.settings import get_settings
    from worldforge.trajectories import ingest as ingest_files
    from worldforge.trajectories.readers.mapping import load_mapping

    with user_errors():
        reader = load_mapping(mapping) if mapping is not None else None
        settings = get_settings()
    with user_errors(), progress() as bar:
        task = bar.add_task("reading trajectories", total=None)
        report = ingest_files(paths, warehouse_of(warehouse), mapping=reader, force=force, store_memory_mb=settings.store_memory_mb,
                              max_record_mb=max_record_mb if max_record_mb is not None else settings.max_record_mb,
                              progress=lambda done, total, rel: bar.update(task, completed=done, total=total, description=rel[-60:]))
    table = Table(title=f"ingested into {report.path}")
    for col in ("source", "trajectories", "turns"):
        table.add_column(col, justify="right" if col != "source" else "left")
    for src, (n_traj, n_turns) in sorted(report.by_source.items()):
        table.add_row(src, str(n_traj), str(n_turns))
    out.print(table)
    print_tally(report.tally)
    skipped = "; ".join(f"{why}: {n}" for why, n in sorted(report.skipped_reasons.items(), key=lambda kv: -kv[1]))
    unchanged = f"; {report.unchanged} unchanged since they were ingested, not read again (--force reads them)" if report.unchanged else ""
    out.print(f"files read {report.files} (skipped {report.skipped}{': ' + skipped if skipped else ''}{unchanged}); turns {report.turns}; "
              f"informative share {report.informative_share:.1%}")
    if report.tally.dropped:
        out.print("quarantined records: [bold]SELECT * FROM quarantine[/] in the store")
    if not report.tally.balanced:
        raise typer.Exit(1)


@app.command("export")
def export(
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="The folder to write (replaced atomically).")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="atif (one ATIF-v1.4 file per trajectory) or otel (OTLP JSON GenAI spans, one JSONL file per source).")] = "atif",
    source: Annotated[Optional[str], typer.Option("--source", "-s", help="Only this source (e.g. record-openai).", show_default=False)] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Export stored trajectories as ATIF or OpenTelemetry GenAI spans, for trajectory viewers and tracing UIs."""
    from worldforge.trajectories.export import FORMATS, export_trajectories

    if fmt not in FORMATS:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(FORMATS)}", param_hint="--format")
    with user_errors(), progress() as bar:
        task = bar.add_task(f"exporting {fmt}", total=None)
        report = export_trajectories(warehouse_of(warehouse), out_dir, fmt, source, progress=lambda n: bar.update(task, completed=n))
    out.print(f"exported {report.trajectories:,} trajectories ({report.turns:,} turns) as {fmt} into {report.out} ({report.files:,} files)")

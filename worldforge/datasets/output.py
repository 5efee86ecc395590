"""Writing a dataset folder: streamed Parquet/JSONL sinks, the build report, the git revision.

A dataset is built in a temporary folder beside its target and swapped in only when the whole
build succeeded (:func:`worldforge.warehouse.atomic.atomic_dir`), so a failed or interrupted build
leaves the previous dataset untouched.
Parquet files are written in row groups as samples arrive (``pyarrow.parquet.ParquetWriter``),
so memory stays bounded by one row group however many samples are built.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from worldforge.tally import Tally
from worldforge.warehouse.layout import Warehouse


class ParquetSink:
    """Rows appended one at a time, written as Parquet row groups of ``group_rows``."""

    def __init__(self, path: Path, schema: pa.Schema, group_rows: int = 1000):
        self.path, self.schema, self.group_rows = path, schema, group_rows
        self.rows: list[dict] = []
        self.tables: list[pa.Table] = []
        self.buffered = 0
        self.count = 0
        self._writer = pq.ParquetWriter(path, schema, compression="zstd")

    def add(self, row: dict) -> None:
        """Append one row (a dict of the schema's columns); a row group is written once ``group_rows`` rows are buffered."""
        self.rows.append(row)
        if len(self.rows) + self.buffered >= self.group_rows:
            self.flush()

    def add_table(self, table: pa.Table) -> None:
        """Rows already in Arrow form (the schema's); buffered into row groups of about ``group_rows``."""
        self._stage()
        self.tables.append(table)
        self.buffered += table.num_rows
        if self.buffered >= self.group_rows:
            self.flush()

    def _stage(self) -> None:
        if self.rows:
            self.tables.append(pa.Table.from_pylist(self.rows, schema=self.schema))
            self.buffered += len(self.rows)
            self.rows = []

    def flush(self) -> None:
        """Write the buffered rows as one row group (nothing when none are buffered)."""
        self._stage()
        if self.tables:
            self._writer.write_table(pa.concat_tables(self.tables), row_group_size=self.buffered)
            self.count += self.buffered
            self.tables, self.buffered = [], 0

    def close(self) -> None:
        """Write the remaining rows and finish the Parquet file."""
        self.flush()
        self._writer.close()


class JsonlSink:
    """One JSON object per line (UTF-8, keys in the given order)."""

    def __init__(self, path: Path):
        self.path = path
        self.count = 0
        self._fh = open(path, "w", encoding="utf-8")

    def add(self, obj: dict) -> None:
        """Write one object as a JSON line (non-ASCII characters kept as they are)."""
        self._fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.count += 1

    def close(self) -> None:
        """Close the file."""
        self._fh.close()


class NdjsonSink:
    """Columns of Arrow tables as JSON lines (written by polars: one object per row, the columns in the given order)."""

    def __init__(self, path: Path, columns: list[str]):
        self.path, self.columns = path, columns
        self.count = 0
        self._fh = open(path, "wb")

    def add_table(self, table: pa.Table) -> None:
        """Write the table's :attr:`columns` as one JSON line per row."""
        pl.from_arrow(table.select(self.columns)).write_ndjson(self._fh)
        self.count += table.num_rows

    def close(self) -> None:
        """Close the file."""
        self._fh.close()


@dataclass
class BuildReport:
    """What a dataset build read, wrote and skipped.

    Balance (:attr:`tally`): inputs = written + skipped by named reason, where an input is a
    trajectory (CPT), a target turn (SFT), a turn of the export (AgentWorldBench) or a page.

    Attributes:
        name: ``cpt`` | ``sft`` | ``agentworldbench``.
        path: the dataset folder.
        tally: inputs, written (units that produced at least one sample), skipped by reason.
        samples: rows written (a split trajectory gives several).
        notes: facts a reader of the card must know (the variant built, a missing chat template ...).
        stats: figures for the card and the asset metadata (token counts, loss shares, acceptance ...).
        files: ``{file name: rows}``.
        config: the build config as used (defaults resolved, e.g. the tokenizer's path); the card prints it.
    """

    name: str
    path: Path
    tally: Tally = field(default_factory=lambda: Tally(unit="inputs", kept_as="written", dropped_as="skipped"))
    samples: int = 0
    notes: list[str] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    files: dict[str, int] = field(default_factory=dict)
    config: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The ``report.json`` object: ``name, inputs, written, samples, skipped {reason: n}, balanced, notes, stats, files``."""
        t = self.tally
        return {"name": self.name, "inputs": t.inputs, "written": t.kept, "samples": self.samples,
                "skipped": dict(sorted(t.dropped.items())), "balanced": t.balanced, "notes": self.notes,
                "stats": self.stats, "files": self.files}


def write_report(folder: Path, report: BuildReport) -> None:
    """Write ``report.json`` (:meth:`BuildReport.to_dict`) into a dataset folder."""
    (folder / "report.json").write_text(json.dumps(report.to_dict(), indent=2, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")


def git_revision() -> str:
    """The project's git commit (``<sha>`` or ``<sha>-dirty``), or ``unknown`` outside a checkout."""
    root = Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{sha}-dirty" if dirty else sha


def export_worlds(warehouse: Warehouse, worlds) -> list[str]:
    """The worlds an export reads: the names given, sorted and without repeats, each a world file of the warehouse.

    Raises:
        WorldforgeError: no name given, or a name without its world file.
    """
    from worldforge.errors import WorldforgeError

    names = sorted(dict.fromkeys(worlds))
    if not names:
        raise WorldforgeError("no world to export: name at least one (--worlds)")
    missing = [w for w in names if not warehouse.world(w).is_file()]
    if missing:
        raise WorldforgeError(f"no such world in {warehouse.root}: {', '.join(missing)}")
    return names

"""WideSearch-style tasks: generation from world tables, their store, file I/O and the scorer.

* :mod:`~worldforge.tasks.generate` — tasks with gold tables from a world and its corpus;
* :mod:`~worldforge.tasks.store` — ``search_tasks`` in the world file, the export;
* :mod:`~worldforge.tasks.io` — the WideSearch task format (JSONL + gold CSV per task);
* :mod:`~worldforge.tasks.scorer`, :mod:`~worldforge.tasks.metrics` — F1 by row and by item.
"""

from worldforge.tasks.generate import check_solvable, generate_tasks
from worldforge.tasks.io import Task, TaskError, load_tasks, norm_column, write_tasks
from worldforge.tasks.scorer import Judge, Score, frame_markdown, parse_markdown_table, render_markdown_table, score_answer, score_table

__all__ = [
    "Judge", "Score", "Task", "TaskError", "check_solvable", "generate_tasks", "load_tasks", "norm_column",
    "frame_markdown", "parse_markdown_table", "render_markdown_table", "score_answer", "score_table", "write_tasks",
]

"""WideSearch-style tasks: file I/O, the scorer and (from world tables) generation."""

from worldforge.tasks.generate import check_solvable, generate_tasks
from worldforge.tasks.io import Task, TaskError, load_tasks, norm_column, write_tasks
from worldforge.tasks.scorer import Judge, Score, parse_markdown_table, render_markdown_table, score_table

__all__ = [
    "check_solvable", "generate_tasks",
    "Judge", "Score", "Task", "TaskError", "load_tasks", "norm_column", "parse_markdown_table",
    "render_markdown_table", "score_table", "write_tasks",
]

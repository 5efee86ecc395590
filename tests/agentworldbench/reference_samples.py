"""Small handwritten AgentWorldBench records in the reference's published format (Qwen-AgentWorld README).

Three domains (``task`` ``mcp``, ``terminal``, and ``AgentWorldBench/search``, whose domain is the
part after the last ``/``), multi-turn trajectories with records pointing at later turns, integer and
string ids, an empty gold observation, a record with an empty ``system_str`` (the reference then sends
no system message), an observation holding a fenced code block, and one without the observation header.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

MCP_SYSTEM = "# Role and Objective\n\nYou are a **Tool World Model**: given a tool call, predict the tool's reply exactly as the real server would."
TERMINAL_SYSTEM = "# Role and Objective\n\nYou are a **Terminal World Model**: given a shell command, predict its output."


def _action(turn: int, name: str, arguments: dict) -> str:
    return f"### Turn {turn}\n**Action:**\n```json\n{json.dumps({'name': name, 'arguments': arguments})}\n```"


def _records(task: str, system: str, prompts: list[str], responses: list[str], ids: dict[int, object]) -> list[dict]:
    """One record per ``{turn_idx: id}`` of a trajectory."""
    return [{"task": task, "id": rid, "prompt": prompts, "response": responses, "current_prompt": prompts[t - 1], "system_str": system,
             "turn_idx": t, "total_turns": len(prompts)} for t, rid in ids.items()]


_MCP_PROMPTS = [_action(1, "list_files", {"path": "/data"}), _action(2, "read_file", {"path": "/data/a.csv"}),
                _action(3, "delete_file", {"path": "/data/b.csv"})]
_MCP_RESPONSES = ['**Environment Observation:**\n{"files": ["a.csv", "b.csv"]}', "**Environment Observation:**\nid,name\n1,alpha\n2,beta",
                  '**Environment Observation:**\n{"deleted": true}']
_MCP_FETCH = [_action(1, "fetch", {"url": "https://example.org/README.md"})]
_MCP_FETCHED = ['**Environment Observation:**\nREADME.md:\n```python\nprint("hello")\n```\nEnd of file.']
_TERM_PROMPTS = [_action(1, "execute_bash", {"command": "mkdir -p /tmp/x"}), _action(2, "execute_bash", {"command": "ls -l /tmp"})]
_TERM_RESPONSES = ["**Environment Observation:**\n", "**Environment Observation:**\ntotal 0\ndrwxr-xr-x 2 root root 40 Jan  1 00:00 x"]
_SEARCH_PROMPTS = [_action(1, "web_search", {"query": "simulated annealing schedule"}), _action(2, "web_search", {"query": "qwen agentworld 2027"})]
_SEARCH_RESPONSES = ["**Environment Observation:**\n1. Simulated annealing - Wikipedia\n   The simulated annealing schedule lowers T geometrically.",
                     'No results found for "qwen agentworld 2027".']

RECORDS = (_records("mcp", MCP_SYSTEM, _MCP_PROMPTS, _MCP_RESPONSES, {1: 145256090131919, 3: 145256090131921})
           + _records("mcp", MCP_SYSTEM, _MCP_FETCH, _MCP_FETCHED, {1: 145256090131922})
           + _records("terminal", TERMINAL_SYSTEM, _TERM_PROMPTS, _TERM_RESPONSES, {1: "term-7:1", 2: "term-7:2"})
           + _records("AgentWorldBench/search", "", _SEARCH_PROMPTS, _SEARCH_RESPONSES, {1: 7, 2: 8}))

# the gold observation of each record, written out by hand
GOLD = {
    145256090131919: '{"files": ["a.csv", "b.csv"]}',
    145256090131921: '{"deleted": true}',
    145256090131922: 'README.md:\n```python\nprint("hello")\n```\nEnd of file.',
    "term-7:1": "",
    "term-7:2": "total 0\ndrwxr-xr-x 2 root root 40 Jan  1 00:00 x",
    7: "1. Simulated annealing - Wikipedia\n   The simulated annealing schedule lowers T geometrically.",
    8: 'No results found for "qwen agentworld 2027".',
}


def sample_records() -> list[dict]:
    """A fresh copy of the handwritten records."""
    return copy.deepcopy(RECORDS)


def domain_of(record: dict) -> str:
    """The reference's domain of a record: the part of ``task`` after its last ``/``."""
    return record["task"].split("/")[-1]


def write_data_dir(folder: Path, records: list[dict] | None = None) -> Path:
    """The records as ``<domain>_test.jsonl`` files in a folder (created), plus a file the reference does not read."""
    folder.mkdir(parents=True, exist_ok=True)
    by_domain: dict[str, list[dict]] = {}
    for rec in sample_records() if records is None else records:
        by_domain.setdefault(domain_of(rec), []).append(rec)
    for domain, recs in by_domain.items():
        (folder / f"{domain}_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    (folder / "notes.jsonl").write_text('{"not": "a record"}\n', encoding="utf-8")
    return folder

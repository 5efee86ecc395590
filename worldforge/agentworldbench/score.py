"""Scoring judged predictions per domain and overall (``worldforge eval score``).

Rule metrics are means over the lines where they apply (×100); judge dimensions are means of
the normalised 0–100 scores (:func:`worldforge.agentworldbench.judge.normalised`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from worldforge.agentworldbench.judge import JUDGE_DIMENSIONS
from worldforge.agentworldbench.verifiers import VERIFIERS
from worldforge.errors import WorldforgeError


def score_file(judged: str | Path) -> dict[str, dict]:
    """Per-domain and overall scores of a judged file.

    Returns:
        ``{domain | "overall": {"lines", "ok", "failed", "rules": {metric: 0–100 or None},
        "judged", "judge": {dimension: 0–100 or None}}}``.

    Raises:
        WorldforgeError: the file is missing or was not produced by :func:`judge_file`.
    """
    src = Path(judged)
    if not src.is_file():
        raise WorldforgeError(f"{src}: no such judged file (run `worldforge eval judge` first)")
    acc: dict[str, dict] = defaultdict(lambda: {"lines": 0, "ok": 0, "rules": defaultdict(list), "judge": defaultdict(list)})
    with open(src, encoding="utf-8") as fh:
        for n, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
                rules = line["rules"]
            except (ValueError, KeyError, TypeError):
                raise WorldforgeError(f"{src}:{n}: not a judged line (no 'rules'; run `worldforge eval judge` on the predictions)") from None
            for key in (line.get("domain") or "unknown", "overall"):
                a = acc[key]
                a["lines"] += 1
                a["ok"] += line.get("status") == "ok"
                for m in VERIFIERS:
                    if rules.get(m) is not None:
                        a["rules"][m].append(rules[m])
                for d, v in (line.get("judge_normalised") or {}).items():
                    a["judge"][d].append(v)
    out = {}
    for key in sorted(acc, key=lambda k: (k == "overall", k)):
        a = acc[key]
        out[key] = {
            "lines": a["lines"], "ok": a["ok"], "failed": a["lines"] - a["ok"],
            "rules": {m: (100 * sum(a["rules"][m]) / len(a["rules"][m]) if a["rules"][m] else None) for m in VERIFIERS},
            "judged": len(a["judge"]["quality"]) if a["judge"] else 0,
            "judge": {d: (sum(a["judge"][d]) / len(a["judge"][d]) if a["judge"][d] else None) for d in JUDGE_DIMENSIONS},
        }
    return out

"""Scoring judged predictions per domain and overall (``worldforge eval score``).

Reads judged JSONL from ``worldforge eval judge`` or from the reference evaluation
(QwenLM/Qwen-AgentWorld ``eval/eval.py judge``: its fields ``task``, ``failed``, ``total_score``
and ``format`` … ``quality``). The domain of a line is its ``task``'s last ``/`` part (the
reference's ``get_subtask``) when that names a benchmark domain, else its ``domain`` field.

Three parts:

* ``reference`` — the reference's ``aggregate_scores`` exactly: per domain, the lines with
  ``failed == 0`` are valid; each dimension and ``total_score`` is the mean of its non-zero
  values over the valid lines, normalised as ``(s − 1) / 4 × 100`` (a domain whose valid lines
  scored nothing shows −25, as there); ``Overall`` is the normalised mean of every non-zero
  valid ``total_score`` (a micro mean), ``valid`` counts those, ``failed`` the rest.
* ``domains`` / ``overall`` / ``macro`` — what the reference does not report: the rule metrics
  (0–100; no judge needed), the judge total with failed lines excluded and counted as 0, micro
  (every line alike) and macro (mean of the domain figures) means, a bootstrap 95% interval of
  the total (percentile method, ``resamples`` draws with a fixed seed), and token counts of the
  world model and of the judge.
* ``judges`` — the distinct judge settings found on the lines (model, temperature, seed,
  max tokens, prompt SHA-256).

:func:`agreement` compares two judged files of the same records (two judges, or two samples).
"""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from statistics import mean

from worldforge.agentworldbench.judge import JUDGE_DIMENSIONS, normalised
from worldforge.agentworldbench.records import domain_of
from worldforge.agentworldbench.verifiers import VERIFIERS
from worldforge.errors import WorldforgeError

DISPLAY_NAMES = {"mcp": "MCP", "search": "Search", "terminal": "Terminal", "swe": "SWE", "android": "Android", "web": "Web", "os": "OS"}
"""How the reference prints each domain (others: capitalised)."""

BOOTSTRAP_RESAMPLES = 1000
"""Bootstrap draws per interval, by default."""

TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "judge_prompt_tokens", "judge_completion_tokens")


def display_name(domain: str) -> str:
    """The reference's display name of a domain (``mcp`` → ``MCP``; unknown ones capitalised)."""
    return DISPLAY_NAMES.get(domain, domain.capitalize())


def line_domain(line: dict) -> str:
    """The domain a judged line is scored under (:func:`~worldforge.agentworldbench.records.domain_of`; ``mcp`` without a ``task``, as in the reference)."""
    return domain_of(str(line.get("task", "mcp")), line.get("domain"))


def read_judged(path: str | Path) -> Iterator[dict]:
    """The lines of a judged file, ours or the reference's.

    Raises:
        WorldforgeError: the file is missing, or a line is not a JSON object with either
            ``rules`` (ours) or ``failed`` / ``total_score`` (the reference's).
    """
    src = Path(path)
    if not src.is_file():
        raise WorldforgeError(f"{src}: no such judged file (run `worldforge eval judge` first)")
    with open(src, encoding="utf-8") as fh:
        for n, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except ValueError:
                raise WorldforgeError(f"{src}:{n}: not JSON") from None
            if not isinstance(line, dict) or not ({"rules", "failed", "total_score"} & set(line)):
                raise WorldforgeError(f"{src}:{n}: not a judged line (no 'rules', 'failed' or 'total_score'; run `worldforge eval judge` on the predictions)")
            yield line


def _valid(line: dict) -> bool:
    return line.get("failed", 1.0) == 0.0


def reference_scores(lines: list[dict]) -> dict:
    """The reference's ``aggregate_scores`` (see the module doc).

    Returns:
        ``{"domains": {domain: {"display", "lines", "valid", "failed", "scores": {dimension |
        "total_score": 0–100} or None}}, "overall": 0–100 or None, "samples", "valid", "failed"}``.
    """
    by: dict[str, list[dict]] = defaultdict(list)
    for line in lines:
        by[line_domain(line)].append(line)
    domains, totals = {}, []
    for d in sorted(by):
        valid = [j for j in by[d] if _valid(j)]
        entry = {"display": display_name(d), "lines": len(by[d]), "valid": len(valid), "failed": len(by[d]) - len(valid), "scores": None}
        if valid:
            entry["scores"] = {}
            for dim in (*JUDGE_DIMENSIONS, "total_score"):
                values = [j.get(dim, 0) for j in valid if j.get(dim, 0) != 0]
                entry["scores"][dim] = normalised(mean(values) if values else 0.0)
                if dim == "total_score":
                    totals.extend(values)
        domains[d] = entry
    return {"domains": domains, "overall": normalised(mean(totals)) if totals else None,
            "samples": len(lines), "valid": len(totals), "failed": len(lines) - len(totals)}


def bootstrap_ci(values: list[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> list[float] | None:
    """Percentile bootstrap 95% interval ``[low, high]`` of the mean of ``values``; ``None`` for fewer than 2 values."""
    if len(values) < 2 or resamples < 1:
        return None
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    return [means[int(0.025 * (resamples - 1))], means[math.ceil(0.975 * (resamples - 1))]]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _total(line: dict) -> float | None:
    """A valid line's judge total on 0–100 (``None`` when it is not valid or scored nothing)."""
    if not _valid(line):
        return None
    t = line.get("judge_total", line.get("total_score"))
    return normalised(t) if isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0 else None


def _group(lines: list[dict], resamples: int, seed: int) -> dict:
    judged = any("failed" in j or "judge_status" in j for j in lines)
    totals = [t for t in map(_total, lines) if t is not None]
    rules: dict[str, list[float]] = defaultdict(list)
    dims: dict[str, list[float]] = defaultdict(list)
    for j in lines:
        for m, v in (j.get("rules") or {}).items():
            if v is not None and m in VERIFIERS:
                rules[m].append(v)
        if _valid(j):
            for d in JUDGE_DIMENSIONS:
                v = (j.get("judge") or {}).get(d) if "judge" in j else j.get(d)
                if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
                    dims[d].append(normalised(v))
    ok = sum(1 for j in lines if j.get("status", "ok" if j.get("gen") else "failed") == "ok")
    covered = [j for j in lines if not not_covered(j)]
    return {
        "lines": len(lines), "ok": ok, "failed": len(lines) - ok, "not_covered": len(lines) - len(covered),
        "rules_covered": {m: _mean([100 * v for j in covered if (v := (j.get("rules") or {}).get(m)) is not None]) for m in VERIFIERS},
        "rules": {m: (100 * sum(rules[m]) / len(rules[m]) if rules[m] else None) for m in VERIFIERS},
        "judged": len(totals) if judged else 0, "judge_failed": len(lines) - len(totals) if judged else 0,
        "judge": {d: _mean(dims[d]) for d in JUDGE_DIMENSIONS},
        "total": _mean(totals),
        "total_failed_as_zero": (sum(totals) / len(lines) if lines else None) if judged else None,
        "ci95": bootstrap_ci(totals, resamples, seed) if judged else None,
        "tokens": {k: sum(int(j.get(k) or 0) for j in lines) for k in TOKEN_FIELDS},
    }


NOT_COVERED = "not grounded"
"""The reason prefix of a record the backend does not predict at all (the grounded backend renders only search
observations of worlds in a warehouse): not a failure of the world model, a domain it does not cover."""


def not_covered(line: dict) -> bool:
    """Whether a prediction or judged line failed because its backend does not cover its domain."""
    return line.get("status") == "failed" and str(line.get("reason") or "").startswith(NOT_COVERED)


def score_lines(lines: list[dict], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> dict:
    """Every figure of judged lines (see the module doc).

    Returns:
        ``{"domains": {domain: group}, "overall": group, "macro": {"rules", "judge", "total",
        "total_failed_as_zero"}, "reference": :func:`reference_scores`, "judges": [settings]}``
        where a group is ``{"lines", "ok", "failed", "not_covered" (failed because the backend does not predict the
        domain, :func:`not_covered`), "rules": {metric: 0–100 or None}, "rules_covered" (the same over the lines
        the backend covers), "judged",
        "judge_failed", "judge": {dimension: 0–100 or None}, "total", "total_failed_as_zero",
        "ci95": [low, high] or None, "tokens": {field: count}}``.
    """
    by: dict[str, list[dict]] = defaultdict(list)
    for line in lines:
        by[line_domain(line)].append(line)
    domains = {d: _group(by[d], resamples, seed) for d in sorted(by)}

    def macro(get) -> float | None:
        return _mean([v for v in (get(g) for g in domains.values()) if v is not None])

    judges = []
    for j in lines:
        meta = j.get("judge_meta")
        if isinstance(meta, dict) and meta not in judges:
            judges.append(meta)
    return {
        "domains": domains,
        "overall": _group(lines, resamples, seed),
        "macro": {"rules": {m: macro(lambda g, m=m: g["rules"][m]) for m in VERIFIERS},
                  "judge": {d: macro(lambda g, d=d: g["judge"][d]) for d in JUDGE_DIMENSIONS},
                  "total": macro(lambda g: g["total"]), "total_failed_as_zero": macro(lambda g: g["total_failed_as_zero"])},
        "reference": reference_scores(lines),
        "judges": judges,
    }


def score_file(judged: str | Path, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> dict:
    """:func:`score_lines` of a judged file (ours or the reference's).

    Raises:
        WorldforgeError: as :func:`read_judged`.
    """
    return score_lines(list(read_judged(judged)), resamples, seed)


def _key(line: dict) -> tuple[str, str]:
    return (str(line.get("id")), str(line.get("turn_idx")))


def _pearson(a: list[float], b: list[float]) -> float | None:
    if len(a) < 2:
        return None
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    sa = math.sqrt(sum((x - ma) ** 2 for x in a))
    sb = math.sqrt(sum((y - mb) ** 2 for y in b))
    if sa == 0 or sb == 0:
        return None
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / (sa * sb)


def quadratic_kappa(a: list[int], b: list[int], k: int = 5) -> float | None:
    """Cohen's quadratic-weighted kappa of two raters' 1..k ratings (1.0: full agreement; ``None``
    when undefined: no pairs, or both raters constant and equal)."""
    if not a:
        return None
    n = len(a)
    observed = sum((x - y) ** 2 for x, y in zip(a, b)) / n
    ca, cb = [a.count(i) for i in range(1, k + 1)], [b.count(i) for i in range(1, k + 1)]
    expected = sum(ca[i] * cb[j] * (i - j) ** 2 for i in range(k) for j in range(k)) / (n * n)
    return None if expected == 0 else 1 - observed / expected


def agreement(first: str | Path, second: str | Path) -> dict:
    """How two judged files of the same records agree (two judges, or two samples of one).

    Lines are paired by ``(id, turn_idx)``; only pairs valid in both count.

    Returns:
        ``{"paired", "unpaired", "both_valid", "dimensions": {dimension: {"exact", "within_1",
        "kappa"}}, "total": {"pearson", "mean_abs_diff"}}`` (rates 0–1, totals on 0–100).

    Raises:
        WorldforgeError: as :func:`read_judged`.
    """
    a = {_key(j): j for j in read_judged(first)}
    b = {_key(j): j for j in read_judged(second)}
    keys = sorted(set(a) & set(b))
    both = [k for k in keys if _total(a[k]) is not None and _total(b[k]) is not None]

    def dim(line: dict, d: str) -> int | None:
        v = (line.get("judge") or {}).get(d) if "judge" in line else line.get(d)
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else None

    dims = {}
    for d in JUDGE_DIMENSIONS:
        pairs = [(dim(a[k], d), dim(b[k], d)) for k in both]
        pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
        xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
        dims[d] = {"pairs": len(pairs), "exact": _mean([float(x == y) for x, y in pairs]),
                   "within_1": _mean([float(abs(x - y) <= 1) for x, y in pairs]), "kappa": quadratic_kappa(xs, ys)}
    ta, tb = [_total(a[k]) for k in both], [_total(b[k]) for k in both]
    return {"paired": len(keys), "unpaired": len(set(a) ^ set(b)), "both_valid": len(both), "dimensions": dims,
            "total": {"pearson": _pearson(ta, tb), "mean_abs_diff": _mean([abs(x - y) for x, y in zip(ta, tb)])}}


def reference_report(reference: dict) -> str:
    """The text the reference's ``eval.py score`` prints for :func:`reference_scores` (``reference``), line for line."""
    rule = "=" * 70
    out = ["", rule, "AgentWorldBench Evaluation Results", rule]
    for entry in reference["domains"].values():
        out += ["", f"--- {entry['display']} ({entry['valid']}/{entry['lines']} valid, {entry['failed']} failed) ---"]
        if not entry["scores"]:
            out.append("  No valid results.")
            continue
        out += [f"  {dim:>15s}: {v:.2f}" for dim, v in entry["scores"].items()]
    if reference["overall"] is not None:
        out += ["", rule, f"Overall: {reference['overall']:.2f}",
                f"Total samples: {reference['samples']}, Valid: {reference['valid']}, Failed: {reference['failed']}", rule]
    return "\n".join(out) + "\n"

"""WideSearch's official scoring rules, quirks included (``score_table(..., rules="widesearch")``).

A re-implementation of ``evaluate_single_query`` in ``src/evaluation/evaluation.py`` of
ByteDance-Seed/WideSearch at commit ``0e664c307d12c88810a31530be40c8c358f56b4f`` (MIT), with the
table reader of ``src/evaluation/data_loader.py`` (``WideSearchResponse.extract_dataframe``,
``WideSearchDataLoader.load_answer``) and the metrics of ``src/evaluation/metric_utils.py``, run
under the pandas it pins (2.3: its lock file has 2.3.0, its requirements 2.3.1; pandas is not needed
here). Written from reading that code, not copied; it reproduces what the code does, not what its
documentation says:

* **Reading the answer.** The first ````` ```markdown ````` fence; without one, the text from the line of
  the first ``|`` to the line of the last (at least four ``|``), cut at the first line that does not start
  with ``|``. The header loses its spaces and is lower-cased; lines made only of ``|``, ``-``, ``:`` and
  spaces (separators, but also rows of empty or ``-`` cells) and lines without ``|`` are dropped; cells are
  stripped and the lines go through ``pandas.read_csv(sep="|")``: ``"`` quotes cells (and may swallow
  lines), ``\\|`` is no escape, a first data row wider than the header turns its leading cells into the
  index, a later wider row is an error, shorter rows are padded with missing cells.
* **Cell types.** Both tables get pandas' type inference, then ``astype(str)``: a column of integers
  reads ``007`` as ``7``; one missing cell makes it float (``1990`` becomes ``1990.0``); missing cells and
  pandas' NA words (``N/A``, ``None``, ``null``, ``nan``, ...) become ``nan``; ``TRUE`` becomes ``True``.
* **Columns.** The answer's normalised columns must be *exactly* the ``required`` ones as written in
  the task (not normalised): otherwise the judge's ``align`` maps them, and any difference left (a
  missing *or an extra* column) scores 0.
* **Rows.** Duplicates on ``unique_columns`` are dropped on the raw text (first kept); key columns
  whose metrics include ``llm_judge`` or ``exact_match`` are mapped onto gold keys by the judge's
  ``align`` (nothing mapped without one, as when WideSearch's model returns nothing); every
  ``eval_pipeline`` column is preprocessed; answer rows join gold rows on the keys as pandas' inner
  merge does: many-to-many, so keys that collide after preprocessing pair every answer row with
  every gold row of that key.
* **Scores.** Key columns score 1; every other required column scores each of its metrics (none when
  ``metric`` is missing); a row is the minimum, ``*_by_row`` = Σ rows / rows, ``*_by_item`` = Σ cells
  / (rows × required columns), F1 the harmonic mean; ``score`` (the success rate) is 1 when the
  answer equals the gold table after preprocessing (same rows, columns in the same order, no key
  column aligned) or when all six figures are exactly 1.
* **Failures.** Where the official code raises (``number_near`` without a numeric ``criterion`` on a
  row where both cells are numbers; an ``eval_pipeline`` column with preprocessing that is not a
  required column; a required column without an ``eval_pipeline`` entry; an unknown metric or
  preprocessing; ``norm_date`` on a string that ``dateparser`` chokes on; a malformed table), it
  catches the exception and scores 0: so does this, naming the exception in ``notes``.
* **Judge.** ``llm_judge`` cells take a judge's verdicts; a pair without a verdict scores 0 (WideSearch:
  an unparsed or missing reply is 0). Without a judge they score 1 when equal after ``norm_str``.

Not reproduced: dates are read by the installed ``dateparser`` (worldforge has 1.5; WideSearch's lock
pins 1.2.1, which reads a few strings as other days, e.g. ``2016年``, 2016 years before today, on today's
day of the month instead of the 1st); a carriage return inside a line of the answer (pandas ends a line there
in ways this reader does not follow); the wording of the model's prompts (worldforge's judge has its own).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from urllib.parse import urlparse

from worldforge.tasks.io import Task, norm_column
from worldforge.tasks.metrics import _FULL_DATES, Score, _number, date_near, exact_match, extract_number, in_match, norm_str

COMMIT = "0e664c307d12c88810a31530be40c8c358f56b4f"
"""The WideSearch commit these rules reproduce."""

NA_VALUES = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                       "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
"""The cells ``pandas.read_csv`` reads as missing by default (pandas 2.3.1 ``STR_NA_VALUES``)."""

_WS = " \t\n\r\v\f"  # C isspace
_SIGNED = re.compile(rf"[{_WS}]*([+-]?)([0-9]*)")
_INF = {"inf": float("inf"), "+inf": float("inf"), "-inf": float("-inf"),
        "infinity": float("inf"), "+infinity": float("inf"), "-infinity": float("-inf")}
_POW10 = [float(f"1e{k}") for k in range(309)]
_TRUE, _FALSE = {"True", "TRUE", "true"}, {"False", "FALSE", "false"}
_INT64, _UINT64 = (-2 ** 63, 2 ** 63 - 1), 2 ** 64 - 1
_URL = re.compile(r"http[s]?://(?:[a-zA-Z]|[0-9]|[$-_@.&+]|[!*\\(\\),]|(?:%[0-9a-fA-F][0-9a-fA-F]))+")


class OfficialError(Exception):
    """Where WideSearch's scorer raises (and then scores the answer 0); the message names its exception."""


# --- pandas.read_csv, as far as WideSearch uses it -------------------------------------------------------


def tokenize(text: str, sep: str) -> list[list[str]]:
    """Records and fields as pandas' C tokenizer splits ``text`` (``"`` quotes, doubled inside a quoted
    cell; blank and whitespace-only lines skipped; ``\\r``, ``\\n`` and ``\\r\\n`` end a line).

    Raises:
        OfficialError: a quoted cell runs to the end of the text (pandas' ``ParserError``).
    """
    records: list[list[str]] = []
    fields: list[str] = []
    buf: list[str] = []
    state, i, n = "record", 0, len(text)

    def end_field() -> None:
        fields.append("".join(buf))
        buf.clear()

    def end_line() -> None:
        records.append(fields.copy())
        fields.clear()

    while i < n:
        c = text[i]
        if state == "record":
            if c in "\r\n":
                i += 1
                continue
            if c in " \t" and c != sep:
                j = i
                while j < n and text[j] in " \t":
                    j += 1
                if j == n or text[j] in "\r\n":  # a whitespace-only line
                    i = j
                    continue
            state = "field"
            continue
        if c in "\r\n" and state != "quoted":
            if state in ("field", "in", "quote"):
                end_field()
            end_line()
            state = "record"
            i += 2 if c == "\r" and text[i + 1:i + 2] == "\n" else 1
            continue
        if state == "field":
            if c == '"':
                state = "quoted"
            elif c == sep:
                end_field()
            else:
                buf.append(c)
                state = "in"
        elif state == "in":
            if c == sep:
                end_field()
                state = "field"
            else:
                buf.append(c)
        elif state == "quoted":
            if c == '"':
                state = "quote"
            else:
                buf.append(c)
        else:  # a quote inside a quoted cell: doubled, the cell's end, or text after it
            if c == '"':
                buf.append('"')
                state = "quoted"
            elif c == sep:
                end_field()
                state = "field"
            else:
                buf.append(c)
                state = "in"
        i += 1
    if state == "quoted":
        raise OfficialError(f"ParserError: EOF inside string starting at row {len(records)}")
    if state != "record":
        end_field()
        end_line()
    return records


def _names(header: list[str]) -> list[str]:
    """pandas' column names: ``Unnamed: i`` for an empty one, ``x.1``, ``x.2``... for repeats."""
    names = [h if h != "" else f"Unnamed: {i}" for i, h in enumerate(header)]
    counts: dict[str, int] = {}
    for i, col in enumerate(names):
        count = counts.get(col, 0)
        while count > 0:
            counts[col] = count + 1
            col = f"{col}.{count}"
            count = counts.get(col, 0)
        names[i] = col
        counts[col] = count + 1
    return names


def read_table(text: str, sep: str) -> tuple[list[str], list[list[str]]]:
    """``pandas.read_csv(StringIO(text), sep=sep)`` before type inference: (column names, rows of raw
    cells; a short row is padded with empty cells). A first data row wider than the header turns its
    leading cells into the index (they are dropped here); a later row wider than the first is an error.

    Raises:
        OfficialError: no lines (``EmptyDataError``), a row too wide, or an unclosed quote (``ParserError``).
    """
    records = tokenize(text, sep)
    if not records:
        raise OfficialError("EmptyDataError: No columns to parse from file")
    header, data = records[0], records[1:]
    width = len(header)
    first = len(data[0]) if data else width
    leading, expected = max(0, first - width), max(width, first)
    rows: list[list[str]] = []
    for k, r in enumerate(data):
        if k and len(r) > expected:
            raise OfficialError(f"ParserError: Error tokenizing data. C error: Expected {expected} fields in line {k + 2}, saw {len(r)}")
        rows.append((list(r) + [""] * (expected - len(r)))[leading:])
    return _names(header), rows


def _int64(word: str) -> int | str:
    """pandas' ``str_to_int64``: the number, ``"overflow"`` (out of int64 while reading digits) or ``"invalid"``."""
    m = _SIGNED.match(word)
    if not m.group(2):
        return "invalid"
    n = -int(m.group(2)) if m.group(1) == "-" else int(m.group(2))
    if not _INT64[0] <= n <= _INT64[1]:
        return "overflow"
    return n if not word[m.end():].lstrip(_WS) else "invalid"


def _uint64(word: str) -> int | str:
    """pandas' ``str_to_uint64``: the number, ``"signed"`` (a ``-``: nothing else is read), ``"overflow"`` or ``"invalid"``."""
    m = _SIGNED.match(word)
    if m.group(1) == "-":
        return "signed"
    if not m.group(2):
        return "invalid"
    n = int(m.group(2))
    if n > _UINT64:
        return "overflow"
    return n if not word[m.end():].lstrip(_WS) else "invalid"


def xstrtod(word: str) -> float | None:
    """pandas' default float parser (``precise_xstrtod`` with trailing spaces allowed), step by step in
    doubles: 17 significant digits at most, then one multiplication or division by a power of ten (so
    ``3.14159265358979323846`` reads ``3.1415926535897927``). ``None`` when the word is not a float."""
    p, n = 0, len(word)
    while p < n and word[p] in _WS:
        p += 1
    negative = p < n and word[p] == "-"
    p += p < n and word[p] in "+-"
    number, exponent, digits, decimals = 0.0, 0, 0, 0
    while p < n and "0" <= word[p] <= "9":
        if digits < 17:
            number = number * 10.0 + (ord(word[p]) - 48)
            digits += 1
        else:
            exponent += 1
        p += 1
    if p < n and word[p] == ".":
        p += 1
        while digits < 17 and p < n and "0" <= word[p] <= "9":
            number = number * 10.0 + (ord(word[p]) - 48)
            p, digits, decimals = p + 1, digits + 1, decimals + 1
        if digits >= 17:
            while p < n and "0" <= word[p] <= "9":
                p += 1
        exponent -= decimals
    if digits == 0:
        return None
    number = -number if negative else number
    if p < n and word[p] in "eE":
        p += 1
        minus = p < n and word[p] == "-"
        p += p < n and word[p] in "+-"
        e, e_digits = 0, 0
        while e_digits < 17 and p < n and "0" <= word[p] <= "9":
            e, e_digits, p = e * 10 + ord(word[p]) - 48, e_digits + 1, p + 1
        exponent += -e if minus else e
        if e_digits == 0:
            p -= 1
    if exponent > 308:
        return None
    if exponent > 0:
        number *= _POW10[exponent]
    elif exponent < -308:
        number = 0.0 if exponent < -616 else number / _POW10[-308 - exponent] / _POW10[308]
    else:
        number /= _POW10[-exponent]
    if number in (float("inf"), float("-inf")):
        return None
    while p < n and word[p] in _WS:
        p += 1
    return number if p == n else None


def as_strings(values: list[str]) -> list[str]:
    """A column as pandas 2.3's C parser infers its type and ``astype(str)`` writes it back.

    Tried in order, each reading the cells top to bottom and stopping at the first it cannot read:
    int64 (``007`` prints ``7``; any missing cell makes the column float, ``7.0``); past int64, uint64,
    or text as written (missing cells kept as written when a huge number meets a missing or negative
    one); float (``repr``: ``1990.0``, ``1e+20``, ``inf``); ``True``/``False`` words; text. A missing cell
    (one of :data:`NA_VALUES`, the empty one included) prints ``nan``.
    """
    missing = [v in NA_VALUES for v in values]
    text = ["nan" if m else v for v, m in zip(values, missing)]
    ints: list[int] = []
    for v, m in zip(values, missing):
        n = 0 if m else _int64(v)
        if n == "invalid":
            break
        if n == "overflow":  # pandas retries as uint64
            seen = set()
            for w, mw in zip(values, missing):
                u = "null" if mw else _uint64(w)
                if u in ("invalid", "overflow"):
                    seen.add(u)
                    break
                seen.add("uint" if isinstance(u, int) and u > _INT64[1] else u if isinstance(u, str) else "int")
            if "overflow" in seen:
                return text
            if "invalid" not in seen:
                if "uint" in seen and seen & {"signed", "null"}:
                    return list(values)  # pandas' conflict path: the cells as written, missing ones too
                if "signed" in seen:
                    return text
                return [str(int(v.strip(_WS).lstrip("+"))) for v in values]
            break
        if not m:
            ints.append(n)  # type: ignore[arg-type]
    else:
        it = iter(ints)
        return ["nan" if m else (repr(float(next(it))) if any(missing) else str(next(it))) for m in missing]
    floats = [None if m else (_INF[v.lower()] if v.lower() in _INF else xstrtod(v)) for v, m in zip(values, missing)]
    if all(f is not None for f, m in zip(floats, missing) if not m):
        return ["nan" if m else repr(f) for f, m in zip(floats, missing)]
    if all(v in _TRUE or v in _FALSE for v, m in zip(values, missing) if not m):
        return ["nan" if m else str(v in _TRUE) for v, m in zip(values, missing)]
    return text


def extract_table(answer: str) -> tuple[list[str], dict[str, list[str]], int] | None:
    """The answer's table as WideSearch reads it: (column names as pandas gives them, ``{name: cells as
    text}``, rows), ``None`` when it finds no table (no ``markdown`` fence and fewer than four ``|``).

    Raises:
        OfficialError: pandas cannot read the table.
    """
    fenced = re.findall(r"```markdown(.*?)```", answer, re.S)
    if fenced:
        block = fenced[0]
    else:
        pipes = [m.start() for m in re.finditer(r"\|", answer)]
        if len(pipes) < 4:
            return None
        start = answer.rfind("\n", 0, pipes[0])
        end = answer.find("\n", pipes[-1])
        block = re.findall(r"((?:\|.*\n?)+)", answer[max(start, 0):len(answer) if end == -1 else end])[0]
    lines = block.strip().split("\n")
    lines[0] = lines[0].replace(" ", "").lower()
    kept = []
    for line in (ln.strip() for ln in lines):
        if set(line.strip()) <= set("|- :") or "|" not in line:
            continue
        kept.append("|".join(part.strip() for part in line.split("|")))
    names, rows = read_table("\n".join(kept), "|")
    columns = {}
    for j, name in enumerate(names):
        if not name.startswith("Unnamed"):
            columns[name] = as_strings([r[j] for r in rows])
    return list(columns), columns, len(rows)


# --- metric_utils ----------------------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def _date(text: str) -> tuple[datetime | None, str | None]:
    """``dateparser.parse`` with WideSearch's settings: (the date, None) or (None, the exception it raised)."""
    import dateparser

    stripped = text.strip()
    if 8 <= len(stripped) <= 20 and stripped[:1].isalnum():
        for fmt in _FULL_DATES:  # the fast path of worldforge.tasks.metrics.parse_date: the same dates
            try:
                return datetime.strptime(stripped, fmt), None
            except ValueError:
                continue
    try:
        return dateparser.parse(text, settings={"PREFER_DAY_OF_MONTH": "first"}), None
    except Exception as exc:  # noqa: BLE001 - dateparser raises assorted errors; the official norm_date does not catch them
        return None, f"{type(exc).__name__}: {exc}"


def norm_date(content: str) -> str:
    """WideSearch ``norm_date``: ``YYYY-MM-DD``, the text itself when ``dateparser`` finds no date.

    Raises:
        OfficialError: ``dateparser`` raised (WideSearch does not catch it).
    """
    parsed, error = _date(content)
    if error is not None:
        raise OfficialError(f"{error} (norm_date of {content!r})")
    return content if parsed is None else parsed.strftime("%Y-%m-%d")


PREPROCESS: dict[str, Callable[[str], str]] = {"extract_number": extract_number, "norm_str": norm_str, "norm_date": norm_date}


def url_match(response: str, target: str, criterion=None) -> float:
    """WideSearch ``url_match``: 1.0 when both texts name the same set of URL hosts (none and none included).

    Raises:
        OfficialError: ``urlparse`` rejects a URL (an unclosed ``[``).
    """
    try:
        hosts = [{urlparse(u).netloc for u in _URL.findall(text)} for text in (response, target)]
    except ValueError as exc:
        raise OfficialError(f"ValueError: {exc} (url_match)") from None
    return 1.0 if hosts[0] == hosts[1] else 0.0


def number_near(response: str, target: str, criterion=None) -> float:
    """WideSearch ``number_near``: 1.0 when ``|response - target| <= |target| * criterion`` (a ``%`` number
    divided by 100), or when neither is a number and the texts are equal.

    Raises:
        OfficialError: both are numbers and ``criterion`` is not a number (WideSearch's ``TypeError``).
    """
    r, t = _number(response), _number(target)
    if r is None or t is None:
        return 1.0 if r is None and t is None and response == target else 0.0
    if not isinstance(criterion, (int, float)):
        raise OfficialError(f"TypeError: unsupported operand type(s) for *: 'float' and '{type(criterion).__name__}' "
                            "(number_near without a numeric criterion)")
    return 1.0 if abs(r - t) <= abs(t) * criterion else 0.0


METRICS: dict[str, Callable[[str, str, object], float]] = {
    "exact_match": exact_match, "in_match": in_match, "url_match": url_match, "number_near": number_near, "date_near": date_near}
"""The rule metrics (``llm_judge`` takes the judge); ``date_near``, ``exact_match`` and ``in_match`` are the
same as worldforge's (:mod:`worldforge.tasks.metrics`), ``url_match`` and ``number_near`` are not."""


# --- evaluate_single_query -------------------------------------------------------------------------------

Aligner = Callable[[list[str], list[str]], dict[str, str]]
"""``align(values, reference) -> {value: reference value}``: WideSearch's ``primary_key_preprocess``, which maps
the answer's column names onto the required ones and its key cells onto the gold keys (values it leaves out
stay as they are). A judge may carry one as its ``align`` method (:meth:`worldforge.tasks.judge.LLMJudge.align`)."""


def _no_alignment(values: list[str], reference: list[str]) -> dict[str, str]:
    return {}


def default_judge(responses: list[str], targets: list[str], criterion: str) -> list[float]:
    """The judge without a model: 1.0 when the cells are equal after ``norm_str``, else 0.0."""
    return [1.0 if norm_str(r) == norm_str(t) else 0.0 for r, t in zip(responses, targets)]


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 1e-9 else 0.0


def _dedup(frame: dict[str, list[str]], rows: int, keys: list[str]) -> tuple[dict[str, list[str]], int]:
    missing = [k for k in keys if k not in frame]
    if missing:
        raise OfficialError(f"KeyError: {missing} (drop_duplicates on unique_columns)")
    seen: set[tuple[str, ...]] = set()
    keep = []
    for i in range(rows):
        key = tuple(frame[k][i] for k in keys)
        if key not in seen:
            seen.add(key)
            keep.append(i)
    return {c: [v[i] for i in keep] for c, v in frame.items()}, len(keep)


def _preprocessed(values: list[str], name: str, col: str) -> list[str]:
    if values and name not in PREPROCESS:
        raise OfficialError(f"AssertionError: preprocess_func_name {name} not in preprocess_function_registry (column {col!r})")
    return [PREPROCESS[name](v) for v in values]


def _metric(name: str, responses: list[str], targets: list[str], criterion, col: str) -> list[float]:
    if not responses:
        return []
    if name not in METRICS:
        raise OfficialError(f"AssertionError: metric_func_name {name} not in metric_function_registry (column {col!r})"
                            if name != "llm_judge_column" else f"TypeError: llm_judge_column is not a cell metric (column {col!r})")
    return [METRICS[name](r, t, criterion) for r, t in zip(responses, targets)]


def _evaluate(answer: str, task: Task, judge, score) -> None:
    ev = task.raw_evaluation or task.evaluation
    required, unique, pipeline = list(ev["required"]), list(ev["unique_columns"]), dict(ev["eval_pipeline"])
    align: Aligner = getattr(judge, "align", None) or _no_alignment
    if not unique:
        raise OfficialError("MergeError: No common columns to perform merge on (unique_columns is empty)")
    lacking = [c for c in required if any(c not in r for r in task.gold[:1])]
    if lacking:
        score.notes.append(f"the gold table lacks required columns {lacking}: WideSearch's loader skips this task")
        return
    n_gold = len(task.gold)
    gold = {c: as_strings([r.get(c, "") for r in task.gold]) for c in required}

    parsed = extract_table(answer)
    if parsed is None:
        score.notes.append("no Markdown table found in the answer (WideSearch reads the first ```markdown fence, else the lines "
                           "from the first '|' to the last, at least four)")
        return
    names, columns, n_resp = parsed
    cols = [norm_column(c) for c in names]
    resp = {c: columns[n] for c, n in zip(cols, names)}
    if set(required) != set(cols):
        mapping = align(cols, required)
        renamed = [mapping.get(c, c) for c in cols]
        if mapping:
            score.notes.append(f"columns aligned by the judge: {[f'{a} -> {b}' for a, b in zip(cols, renamed) if a != b]}")
        if len(set(renamed)) < len(renamed) and set(required) == set(renamed):
            raise OfficialError(f"ValueError: the column alignment gives duplicate columns {renamed}")
        resp = {b: resp[a] for a, b in zip(cols, renamed)}
        cols = renamed
    if set(required) != set(cols):
        lacks, extra = [c for c in required if c not in cols], [c for c in cols if c not in required]
        score.notes.append(f"answer lacks required columns {lacks} (has {cols}): WideSearch scores it 0" if lacks else
                           f"answer has columns the task does not ask for {extra}: WideSearch scores it 0")
        return
    if judge is None:
        judged = sorted(c for c in required if c not in unique and "llm_judge" in pipeline.get(c, {}).get("metric", []))
        if judged:
            score.notes.append(f"no judge given: llm_judge columns {judged} scored by normalised exact match")
    judge = judge or default_judge

    resp, n_resp = _dedup(resp, n_resp, unique)
    gold, n_gold = _dedup(gold, n_gold, unique)
    aligned = []
    for col in unique:
        item = pipeline.get(col)
        metrics = item.get("metric", []) if item is not None else []
        if "llm_judge" in metrics or "exact_match" in metrics:
            mapping = align(resp[col], gold[col])
            resp[col + "_before_map"] = resp[col]
            resp[col] = [mapping.get(v, v) for v in resp[col]]
            aligned.append(col)
    for col, item in pipeline.items():
        for name in item.get("preprocess", []):
            for frame, side in ((resp, "answer"), (gold, "gold")):
                if col not in frame:
                    raise OfficialError(f"KeyError: {col!r} (eval_pipeline preprocesses a column the {side} table does not have)")
                frame[col] = _preprocessed(frame[col], name, col)

    def rows(frame: dict[str, list[str]], n: int) -> list[tuple[str, ...]]:
        return sorted(tuple(frame[c][i] for c in required) for i in range(n))

    if n_gold == n_resp and not aligned and cols == required and rows(gold, n_gold) == rows(resp, n_resp):
        score.score = 1.0  # WideSearch compares the sorted tables when their shapes agree
    by_key: dict[tuple[str, ...], list[int]] = {}
    for i in range(n_resp):
        by_key.setdefault(tuple(resp[c][i] for c in unique), []).append(i)
    pairs = [(g, a) for g in range(n_gold) for a in by_key.get(tuple(gold[c][g] for c in unique), [])]

    scored: dict[str, list[float]] = {}
    owner: dict[str, str] = {}
    unjudged = 0
    for col in required:
        if col in unique:
            scored[f"{col}_exact_match"], owner[f"{col}_exact_match"] = [1.0] * len(pairs), col
            continue
        if col not in pipeline:
            raise OfficialError(f"KeyError: {col!r} (a required column without an eval_pipeline entry)")
        item = pipeline[col]
        responses, targets = [resp[col][a] for _, a in pairs], [gold[col][g] for g, _ in pairs]
        for name in item.get("metric", []):
            if name == "llm_judge":
                verdicts = list(judge(responses, targets, item.get("criterion") or "")) if pairs else []
                unjudged += sum(v is None for v in verdicts)
                values = [0.0 if v is None else float(v) for v in verdicts]
            else:
                values = _metric(name, responses, targets, item.get("criterion"), col)
            scored[f"{col}_{name}"], owner[f"{col}_{name}"] = values, col
    if unjudged:
        score.notes.append(f"the judge gave no verdict on {unjudged} llm_judge cell(s): scored 0, as WideSearch does")

    tp_row = sum(min(v[i] for v in scored.values()) for i in range(len(pairs))) if scored else 0.0
    tp_item = sum(sum(v) for v in scored.values())
    width = len(required)
    score.precision_by_row = tp_row / n_resp if n_resp else 0.0
    score.recall_by_row = tp_row / n_gold if n_gold else 0.0
    score.precision_by_item = tp_item / (n_resp * width) if n_resp and width else 0.0
    score.recall_by_item = tp_item / (n_gold * width) if n_gold and width else 0.0
    score.f1_by_row = _f1(score.precision_by_row, score.recall_by_row)
    score.f1_by_item = _f1(score.precision_by_item, score.recall_by_item)
    figures = (score.precision_by_row, score.recall_by_row, score.f1_by_row, score.precision_by_item, score.recall_by_item, score.f1_by_item)
    if all(f == 1.0 for f in figures):
        score.score = 1.0
    for col in required:
        lists = [v for name, v in scored.items() if owner[name] == col]
        tp = sum(map(sum, lists)) / len(lists) if lists else 0.0
        score.by_column[col] = _f1(tp / n_resp if n_resp else 0.0, tp / n_gold if n_gold else 0.0)
    matched = len({a for _, a in pairs})
    if not n_resp:
        score.notes.append("the answer table has no rows")
    elif matched < n_resp:
        score.notes.append(f"{n_resp - matched} answer row(s) match no gold row on {unique}")
    if len(pairs) > len({g for g, _ in pairs}) or len(pairs) > matched:
        score.notes.append(f"keys collide after preprocessing: {len(pairs)} answer-gold pairs (WideSearch's many-to-many merge)")
    if aligned and score.score == 0.0 and n_gold == n_resp:
        score.notes.append(f"success needs all six figures at 1: key columns {aligned} were aligned, so the table is never compared as a whole")


def score_widesearch(answer_markdown: str, task: Task, judge=None):
    """Score an answer by WideSearch's own rules (see the module docstring; ``score_table(..., rules="widesearch")``).

    Args:
        answer_markdown: the agent's answer.
        task: the task; its evaluation as written in the task file (``raw_evaluation``) when it has one.
        judge: a :data:`~worldforge.tasks.scorer.Judge` for ``llm_judge`` columns (a verdict of ``None``
            scores 0) with, optionally, an ``align`` method (:data:`Aligner`) for the column and key
            alignment; without one, normalised exact match and no alignment.

    Returns:
        A :class:`~worldforge.tasks.scorer.Score` with ``score`` (the success rate, 0 or 1) set; where
        WideSearch's code raises, every figure is 0 and ``notes`` names the exception.
    """

    score = Score(score=0.0)
    try:
        _evaluate(answer_markdown or "", task, judge, score)
    except OfficialError as exc:
        kept = [n for n in score.notes if not n.startswith("no judge given")]
        score = Score(score=0.0, notes=kept + [f"WideSearch's scorer raises here ({exc}) and scores the answer 0"])
    return score

"""Run WideSearch's own scorer (``src/evaluation/evaluation.py:evaluate_single_query``) offline on answers.

A script, not a test module: :mod:`tests.tasks.widesearch_reference` runs it with the interpreter of a
WideSearch checkout (ByteDance-Seed/WideSearch; its pinned pandas 2.3.1 and dateparser), so it imports
nothing from worldforge. Only the language model is replaced, by a deterministic stub that does what
worldforge's default judge does:

* column and primary-key alignment (``primary_key_preprocess``): the model returns nothing, so no value
  is mapped (identity alignment);
* ``llm_judge`` columns (``llm_judge_column``): 1 when the two cells are equal after WideSearch's own
  ``norm_str``, else 0, as the ``json`` block the scorer parses.

Packages the scorer imports only for data download, parallelism or the model client (``datasets``,
``huggingface_hub``, ``pandarallel``, ``src.utils.llm``) are stubbed before the import, and
``dateparser.parse`` is memoised (the same result, computed once per distinct text and settings: it takes
most of the scorer's time).

Usage: ``python widesearch_official.py CHECKOUT < job.json > results.jsonl`` where ``job.json`` is
``{"tasks": {instance_id: {"evaluation": {...}, "gold": "path/to/gold.csv"}},
"answers": [{"key": ..., "instance_id": ..., "response": "..."}]}``; one JSON line per answer:
``{"key", "score", "precision_by_row", ..., "f1_by_item", "msg"}`` (``msg`` cut to 300 characters; for an
exception the scorer caught, its last traceback line).
"""

from __future__ import annotations

import ast
import copy
import json
import sys
import types

FIGURES = ("score", "precision_by_row", "recall_by_row", "f1_by_row", "precision_by_item", "recall_by_item", "f1_by_item")
ALIGN_PROMPT = "Your task is to align two vocabularies."
RESPONSE_START, RESPONSE_END = "====== response-start ======", "====== response-end ======"


def _module(name: str, **attrs) -> None:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod


def _norm_str(content) -> str:
    return str(content).lower().strip().replace(" ", "").replace("*", "")


def fake_llm_completion(messages, tools=None, model_config_name="default_eval_config"):
    """The stub of ``src.utils.llm.llm_completion``: no alignment, normalised exact match for judged columns."""
    prompt = messages if isinstance(messages, str) else messages[-1]["content"]
    if prompt.startswith(ALIGN_PROMPT):
        return None  # the model returned nothing: primary_key_preprocess maps nothing
    if RESPONSE_START in prompt:
        body = prompt.split(RESPONSE_START, 1)[1].rsplit(RESPONSE_END, 1)[0].strip()
        pairs = ast.literal_eval(body)
        scores = {idx: int(_norm_str(p["response"]) == _norm_str(p["target"])) for idx, p in pairs.items()}
        return types.SimpleNamespace(content="```json\n" + json.dumps(scores) + "\n```")
    raise AssertionError(f"unexpected prompt: {prompt[:200]!r}")


def main() -> None:
    checkout = sys.argv[1]
    sys.path.insert(0, checkout)
    _module("pandarallel", pandarallel=types.SimpleNamespace(initialize=lambda **kwargs: None))
    _module("datasets", load_dataset=None)
    _module("huggingface_hub", snapshot_download=None, try_to_load_from_cache=None)
    _module("src.utils.llm", llm_completion=fake_llm_completion)
    import dateparser

    parse, memo = dateparser.parse, {}

    def memoised_parse(date_string, *args, **kwargs):
        key = (date_string, repr(args), repr(sorted(kwargs.items())))
        if key not in memo:
            memo[key] = parse(date_string, *args, **kwargs)
        return memo[key]

    dateparser.parse = memoised_parse
    from loguru import logger

    logger.remove()
    from src.evaluation.data_loader import WideSearchDataLoader, WideSearchQuery, WideSearchResponse
    from src.evaluation.evaluation import evaluate_single_query

    job = json.load(sys.stdin)
    queries = {}
    for iid, t in job["tasks"].items():
        answer = WideSearchDataLoader.load_answer(None, t["gold"], t["evaluation"]["required"])
        queries[iid] = WideSearchQuery(instance_id=iid, query="", evaluation=t["evaluation"], answer=answer, language="")
    for a in job["answers"]:
        query = queries[a["instance_id"]]
        if query.answer is None:  # the official loader rejects the task
            out = {k: 0.0 for k in FIGURES} | {"msg": "gold table not loadable"}
        else:
            r = evaluate_single_query(copy.deepcopy(query), WideSearchResponse(instance_id=a["instance_id"], response=a["response"]))
            msg = str(r.msg)
            if msg.startswith("evaluator error"):  # the exception, not the whole traceback
                msg = "evaluator error: " + msg.strip().splitlines()[-1]
            out = {k: float(getattr(r, k)) for k in FIGURES} | {"msg": msg[:300]}
        print(json.dumps({"key": a["key"], **out}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()

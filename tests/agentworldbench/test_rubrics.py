"""The per-domain judge rubrics, and the loader of the reference's prompt files."""

import hashlib
import os
from pathlib import Path

import pytest

from worldforge.agentworldbench.rubrics import GENERIC_RUBRIC, JUDGE_RUBRICS, PromptSet, judge_rubric, load_prompts
from worldforge.errors import WorldforgeError
from worldforge.worldmodel.prompts import BENCHMARK_DOMAINS, GENERIC_SYSTEM_PROMPT, SYSTEM_PROMPTS

DIMENSIONS = ("format", "factuality", "consistency", "realism", "quality")

RUBRIC_SPECIFICS = {
    "terminal": ["prompt", "command echo", "exit", "error messages word for word", "silent", "working directory"],
    "swe": ["line numbers", "edit", "test", "traceback", "harness"],
    "search": ["[n] <url>", "Title:", "Snippet:", "Date:", "result", "snippet", "memory", "facts"],
    "mcp": ["JSON", "success versus error", "ids", "key", "Validation errors"],
    "android": ["bounds", "keyboard", "dialog", "screen", "typed text", "no-op"],
    "web": ["URL", "accessibility tree", "element ids", "page", "fill"],
    "os": ["window", "focused widget", "accessibility tree", "dialog", "printed output"],
}


def test_every_domain_has_its_own_rubric_with_five_anchored_dimensions():
    assert set(JUDGE_RUBRICS) == set(BENCHMARK_DOMAINS)
    texts = list(JUDGE_RUBRICS.values())
    assert len(set(texts)) == len(texts)
    for domain, text in [*JUDGE_RUBRICS.items(), ("generic", GENERIC_RUBRIC)]:
        for d in DIMENSIONS:
            section = text.split(f"### {d}\n", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
            assert all(f"- {n}: " in section for n in (5, 3, 1)), (domain, d)
        assert "integer from 1 to 5" in text and "ground truth" in text, domain
        assert "<final_evaluation>" not in text and "```json" not in text, domain  # the user message asks for the output
    for domain, text in JUDGE_RUBRICS.items():
        assert len(text) > 4000, domain
        missing = [w for w in RUBRIC_SPECIFICS[domain] if w not in text]
        assert not missing, f"{domain} rubric lacks {missing}"
        shared = set(GENERIC_RUBRIC.split("\n\n"))
        assert sum(len(p) for p in text.split("\n\n") if p not in shared) > 3000, domain


def test_rubrics_separate_exact_facts_from_free_values_and_structure():
    for domain, text in JUDGE_RUBRICS.items():
        classes = text.split("## What a simulation can know", 1)[1].split("\n## ", 1)[0]
        assert "must match" in classes and "plausib" in classes and "**Structure**" in classes, domain
        assert "empty prediction" in text, domain


def test_judge_rubric_maps_through_benchmark_domain():
    assert judge_rubric("tool") == JUDGE_RUBRICS["mcp"]
    assert all(judge_rubric(d) == JUDGE_RUBRICS[d] for d in BENCHMARK_DOMAINS)
    assert judge_rubric("games") == GENERIC_RUBRIC


# -- the loader ---------------------------------------------------------------------------------


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
    return root


def _all_files(prefix: str = "") -> dict[str, str]:
    return {f"{prefix}{d}/{name}": f"Fake {kind} prompt for {d}.\r\nSecond line with ümlaut.\n\n"
            for d in BENCHMARK_DOMAINS for kind, name in (("system", "system_prompt.txt"), ("judge", "judge_system_prompt.txt"))}


def test_defaults_without_a_folder():
    ps = load_prompts()
    assert isinstance(ps, PromptSet) and load_prompts(None) == ps
    assert ps.system == SYSTEM_PROMPTS and ps.judge == JUDGE_RUBRICS
    assert ps.system_prompt("tool") == SYSTEM_PROMPTS["mcp"] and ps.judge_prompt("tool") == JUDGE_RUBRICS["mcp"]
    assert ps.system_prompt("games") == GENERIC_SYSTEM_PROMPT and ps.judge_prompt("games") == GENERIC_RUBRIC
    assert all(ps.source(k, d) == "worldforge" for k in ("system", "judge") for d in (*BENCHMARK_DOMAINS, "tool", "games"))
    assert ps.sha256("system", "tool") == hashlib.sha256(SYSTEM_PROMPTS["mcp"].encode("utf-8")).hexdigest()
    with pytest.raises(ValueError, match="kind"):
        ps.source("user", "mcp")


@pytest.mark.parametrize("layout", ["prompts folder", "checkout root"])
def test_a_full_set_replaces_every_text_byte_for_byte(tmp_path, layout):
    prefix = "" if layout == "prompts folder" else "prompts/"
    _write(tmp_path, _all_files(prefix) | {"README.md": "not a prompt"})
    ps = load_prompts(tmp_path)
    assert sum(v != "worldforge" for v in ps.origin.values()) == 14
    for d in BENCHMARK_DOMAINS:
        for kind, name, text in (("system", "system_prompt.txt", ps.system_prompt(d)), ("judge", "judge_system_prompt.txt", ps.judge_prompt(d))):
            path = tmp_path / prefix / d / name
            assert text == path.read_bytes().decode("utf-8")  # CRLF, trailing blank line and non-ASCII kept
            assert ps.source(kind, d) == str(path.absolute())
            assert ps.sha256(kind, d) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert ps.system_prompt("tool") == ps.system_prompt("mcp") and ps.source("judge", "tool") == ps.source("judge", "mcp")
    assert load_prompts(str(tmp_path)) == ps  # a str works as well as a Path


def test_a_partial_set_keeps_worldforge_defaults_and_says_so(tmp_path):
    _write(tmp_path, {"prompts/search/judge_system_prompt.txt": "My search rubric.\n", "prompts/os/system_prompt.txt": "My OS world model.\n"})
    ps = load_prompts(tmp_path)
    assert ps.judge_prompt("search") == "My search rubric.\n" and ps.system_prompt("os") == "My OS world model.\n"
    assert ps.system_prompt("search") == SYSTEM_PROMPTS["search"] and ps.judge_prompt("os") == JUDGE_RUBRICS["os"]
    assert ps.source("judge", "search").endswith(str(Path("prompts", "search", "judge_system_prompt.txt")))
    assert ps.source("system", "search") == "worldforge" and ps.source("judge", "terminal") == "worldforge"
    assert {k for k, v in ps.origin.items() if v != "worldforge"} == {"judge:search", "system:os"}
    assert len(ps.origin) == 14


def test_sha256_follows_the_text(tmp_path):
    default = load_prompts().sha256("judge", "terminal")
    _write(tmp_path, {"terminal/judge_system_prompt.txt": "Rubric A\n"})
    a = load_prompts(tmp_path).sha256("judge", "terminal")
    _write(tmp_path, {"terminal/judge_system_prompt.txt": "Rubric A \n"})
    b = load_prompts(tmp_path).sha256("judge", "terminal")
    assert len({default, a, b}) == 3 and a == hashlib.sha256(b"Rubric A\n").hexdigest()
    assert load_prompts(tmp_path).sha256("system", "terminal") == load_prompts().sha256("system", "terminal")


def test_a_missing_folder_or_a_file_is_an_error(tmp_path):
    with pytest.raises(WorldforgeError, match="no such folder") as e:
        load_prompts(tmp_path / "nowhere")
    assert str(tmp_path / "nowhere") in str(e.value)
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(WorldforgeError, match="not a folder") as e:
        load_prompts(tmp_path / "file.txt")
    assert "file.txt" in str(e.value)


def test_a_folder_without_prompt_files_says_what_layout_is_expected(tmp_path):
    _write(tmp_path, {"prompts/games/system_prompt.txt": "not a benchmark domain", "terminal/notes.txt": "x"})
    with pytest.raises(WorldforgeError) as e:
        load_prompts(tmp_path)
    msg = str(e.value)
    assert str(tmp_path) in msg and "<domain>/system_prompt.txt" in msg and "<domain>/judge_system_prompt.txt" in msg
    assert "prompts/" in msg and "terminal" in msg and "os" in msg


def test_a_prompt_file_that_is_not_utf8_is_an_error(tmp_path):
    _write(tmp_path, {"web/system_prompt.txt": "Fine.\n", "web/judge_system_prompt.txt": "R\xe9sum\xe9".encode("latin-1")})
    with pytest.raises(WorldforgeError, match="not UTF-8") as e:
        load_prompts(tmp_path)
    assert str(tmp_path / "web" / "judge_system_prompt.txt") in str(e.value)


@pytest.mark.parametrize("content", ["", "  \n\n"])
def test_an_empty_prompt_file_is_an_error(tmp_path, content):
    _write(tmp_path, {"prompts/android/system_prompt.txt": content})
    with pytest.raises(WorldforgeError, match="empty") as e:
        load_prompts(tmp_path)
    assert str(Path("android", "system_prompt.txt")) in str(e.value)


def test_a_prompt_path_that_is_not_a_file_is_an_error(tmp_path):
    (tmp_path / "mcp" / "judge_system_prompt.txt").mkdir(parents=True)
    with pytest.raises(WorldforgeError, match="not a file"):
        load_prompts(tmp_path)


@pytest.mark.skipif(not os.environ.get("WORLDFORGE_REFERENCE_EVAL"),
                    reason="set WORLDFORGE_REFERENCE_EVAL to a checkout of the reference evaluation (QwenLM/Qwen-AgentWorld)")
def test_the_reference_checkout_supplies_all_fourteen_files():
    root = Path(os.environ["WORLDFORGE_REFERENCE_EVAL"])
    ps = load_prompts(root)
    assert sum(v != "worldforge" for v in ps.origin.values()) == 14
    for d in BENCHMARK_DOMAINS:
        for kind, name in (("system", "system_prompt.txt"), ("judge", "judge_system_prompt.txt")):
            path = Path(ps.source(kind, d))
            assert path.name == name and path.parent.name == d
            assert ps.sha256(kind, d) == hashlib.sha256(path.read_bytes()).hexdigest()
        assert ps.system_prompt(d) != SYSTEM_PROMPTS[d] and ps.judge_prompt(d) != JUDGE_RUBRICS[d]
    assert ps.judge_prompt("tool") == ps.judge_prompt("mcp")

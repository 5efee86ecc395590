"""The world model's per-domain system prompts."""

from worldforge.trajectories.model import DOMAINS
from worldforge.worldmodel.prompts import BENCHMARK_DOMAINS, CONTRACT, GENERIC_SYSTEM_PROMPT, SYSTEM_PROMPTS, benchmark_domain, system_prompt

DIMENSIONS = ("format", "factuality", "consistency", "realism", "quality")

# words each domain's texts must use: what is particular to that environment
SYSTEM_SPECIFICS = {
    "terminal": ["stdout", "stderr", "exit", "command not found", "prompt", "empty"],
    "swe": ["SWE-agent", "OpenHands", "str_replace", "pytest", "line numbers", "traceback"],
    "search": ["web_search", "web_extractor", "dict_memory", "[n] <url>", "Title:", "Snippet:", "Date:", "Markdown"],
    "mcp": ["MCP", "tools/call", "JSON", "error", "isError", "identifiers"],
    "android": ["Android", "bounds", "keyboard", "navigate_back", "scroll", "dialog"],
    "web": ["accessibility tree", "click(bid)", "fill(bid, value)", "URL", "goto(url)", "element id"],
    "os": ["pyautogui", "accessibility tree", "window", "dialog", "shell command", "traceback"],
}


def test_benchmark_domains_and_the_mapping_of_worldforge_domains():
    assert BENCHMARK_DOMAINS == ("terminal", "swe", "search", "mcp", "android", "web", "os")
    assert benchmark_domain("tool") == "mcp"
    assert all(benchmark_domain(d) == d for d in BENCHMARK_DOMAINS)
    assert {benchmark_domain(d) for d in DOMAINS} == set(BENCHMARK_DOMAINS)
    assert benchmark_domain("  Tool ") == "mcp" and benchmark_domain(" Games ") == "games"


def test_every_domain_has_its_own_substantial_system_prompt():
    assert set(SYSTEM_PROMPTS) == set(BENCHMARK_DOMAINS)
    texts = list(SYSTEM_PROMPTS.values())
    assert len(set(texts)) == len(texts)
    for domain, text in SYSTEM_PROMPTS.items():
        assert len(text) > 3000 and text.count("\n\n") >= 10, domain
        assert text.endswith(CONTRACT), domain
        assert all(f"**{d}**" in text for d in DIMENSIONS), domain
        missing = [w for w in SYSTEM_SPECIFICS[domain] if w not in text]
        assert not missing, f"{domain} system prompt lacks {missing}"
        # the domain's own paragraphs (those the generic prompt does not share) are substantial by themselves
        shared = set(GENERIC_SYSTEM_PROMPT.split("\n\n"))
        assert sum(len(p) for p in text.split("\n\n") if p not in shared) > 2500, domain


def test_system_prompts_state_the_reply_layout():
    for text in [*SYSTEM_PROMPTS.values(), GENERIC_SYSTEM_PROMPT]:
        assert "<think>...</think>" in text and "<predicted_observation>...</predicted_observation>" in text
        assert text.index("<think>") < text.index("<predicted_observation>")
        assert "<predicted_observation></predicted_observation>" in text and "empty" in text
        assert "### Turn N" in text and "**Environment Observation:**" in text  # the inputs are described


def test_system_prompt_maps_through_benchmark_domain():
    assert system_prompt("tool") == SYSTEM_PROMPTS["mcp"]
    for d in BENCHMARK_DOMAINS:
        assert system_prompt(d) == SYSTEM_PROMPTS[d] and system_prompt(d.upper()) == SYSTEM_PROMPTS[d]
    assert system_prompt("games") == GENERIC_SYSTEM_PROMPT
    assert all(system_prompt(d) in SYSTEM_PROMPTS.values() for d in DOMAINS)

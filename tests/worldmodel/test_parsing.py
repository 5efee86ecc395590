"""Reading world-model replies: ``<think>`` and ``<predicted_observation>``, or the structured-output object."""

import pytest

from worldforge.worldmodel.formats import action_prompt, observation_text, strip_observation_header
from worldforge.worldmodel.parsing import ParseFailure, Prediction, format_prediction, parse_prediction


@pytest.mark.parametrize("text,think,obs", [
    ("<think>look up</think>\n<predicted_observation>\n**Environment Observation:**\nok: 3 rows\n</predicted_observation>", "look up", "ok: 3 rows"),
    ("<predicted_observation>plain</predicted_observation>", None, "plain"),
    ("<think>a <predicted_observation>draft</predicted_observation></think><predicted_observation>final</predicted_observation>", None, "final"),
    ('{"think": "t", "predicted_observation": "from json"}', "t", "from json"),
    ("<think>prints nothing</think><predicted_observation>\n\n</predicted_observation>", "prints nothing", ""),
    ("<predicted_observation>**Environment Observation:**\n</predicted_observation>", None, ""),
    ('{"think": "t", "predicted_observation": ""}', "t", ""),
])
def test_parse_prediction(text, think, obs):
    p = parse_prediction(text)
    assert isinstance(p, Prediction) and p.observation == obs
    if think is not None:
        assert p.think == think


@pytest.mark.parametrize("text,reason", [
    ("", "empty reply"),
    ("the file has 3 lines", "missing <predicted_observation> tag"),
    ("<think>x</think><predicted_observation>cut off here", "unclosed <predicted_observation> tag (truncated reply?)"),
    ("<think>never closed <predicted_observation>x</predicted_observation>", "unclosed <think> tag"),
])
def test_parse_failures_have_reasons(text, reason):
    p = parse_prediction(text)
    assert isinstance(p, ParseFailure) and p.reason == reason


def test_format_and_parse_are_inverse():
    p = parse_prediction(format_prediction("line 1\nline 2", "why"))
    assert p == Prediction("why", "line 1\nline 2")


def test_the_observation_formats():
    assert action_prompt(2, '{"name": "web_search", "arguments": {"query": "x"}}') == (
        '### Turn 2\n**Action:**\n```json\n{"name": "web_search", "arguments": {"query": "x"}}\n```')
    assert action_prompt(1, "ls -la") == "### Turn 1\n**Action:**\nls -la"
    assert observation_text("ok") == "**Environment Observation:**\nok"
    assert strip_observation_header(observation_text(" ok \n")) == "ok" and strip_observation_header("  plain ") == "plain"

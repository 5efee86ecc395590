"""The naive baselines: far below the oracle, an unknown name refused."""

import pytest

from worldforge.agents.baselines import BASELINES, run_baseline
from worldforge.simenv import SearchEnv


def test_naive_baselines_stay_far_below_the_oracle(world):
    wh, tasks = world
    for b in BASELINES:
        runs = [run_baseline(SearchEnv("esports_2031", t.extra["scenario"], t, warehouse=wh), t, b) for t in tasks]
        assert all(r.calls >= 1 for r in runs)
        assert sum(r.score.f1_by_item for r in runs) / len(runs) < 0.5
    with pytest.raises(ValueError, match="unknown baseline"):
        run_baseline(SearchEnv("esports_2031", warehouse=wh, task=tasks[0]), tasks[0], "psychic")

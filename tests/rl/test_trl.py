"""TRL's environment_factory adapter (worldforge.rl.trl) and `worldforge rl dataset`.

The oracle drives the adapter through its tool methods; a real ``trl.GRPOTrainer`` trains a tiny
local model (taught first to emit ``<tool_call>`` blocks, since a random model never does) for
two optimisation steps on CPU with ``environment_factory``; the CLI writes a dataset whose rows
reset the environment.
"""

from __future__ import annotations

import inspect
import json
import os
import random

import pytest
from typer.testing import CliRunner

from tests.rl.conftest import WORLD
from worldforge.errors import WorldforgeError
from worldforge.rl.env import RewardConfig, scripted_answer
from worldforge.rl.trl import INSTRUCTION, SearchWorldToolEnv, make_env_factory, prompt_dataset, prompt_rows, write_prompt_dataset

TOOLS = {"web_search", "web_extractor", "dict_memory", "submit"}


def _sample(rl_tasks, n: int, seed: int = 0) -> list[str]:
    return random.Random(seed).sample(sorted(rl_tasks), min(n, len(rl_tasks)))


# -- the environment class ---------------------------------------------------------------------
def test_public_methods_are_exactly_trls_contract():
    public = {n for n, _ in inspect.getmembers(SearchWorldToolEnv, predicate=inspect.isfunction) if not n.startswith("_")}
    assert public == TOOLS | {"reset", "get_reward"}


def test_tool_schemas_render_from_signatures_and_docstrings():
    from transformers.utils import get_json_schema

    env = SearchWorldToolEnv(warehouse="/nonexistent", record=False)
    schemas = {s["function"]["name"]: s["function"] for s in (get_json_schema(getattr(env, n)) for n in sorted(TOOLS))}
    assert schemas["submit"]["parameters"]["required"] == ["answer"]
    assert schemas["web_extractor"]["parameters"]["required"] == ["url"]
    assert set(schemas["web_search"]["parameters"]["properties"]) == {"query", "queries", "page"}
    assert schemas["web_search"]["parameters"]["properties"]["page"]["type"] == "integer"
    assert set(schemas["dict_memory"]["parameters"]["properties"]) == {"operation", "dict", "key_list"}


@pytest.mark.parametrize("perturbations", [None, "default"])
def test_the_oracle_through_the_tool_methods_earns_reward_one(rl_wh, rl_tasks, perturbations):
    env = make_env_factory(warehouse=rl_wh, record=False)()
    for i, iid in enumerate(_sample(rl_tasks, 4)):
        row = {"prompt": [{"role": "user", "content": INSTRUCTION}], "world": WORLD, "task": iid, "scenario": None,
               "seed": i, "perturbations": perturbations}
        text = env.reset(**row)
        assert text.startswith("\n\n") and rl_tasks[iid].question in text
        assert "Tools:" not in text  # TRL renders the tool schemas itself
        calls_before = env.total_tool_calls
        answer = scripted_answer(rl_tasks[iid], lambda n, a: getattr(env, n)(**a))
        assert env.total_tool_calls > calls_before
        assert env.submit(answer) == "Answer submitted; the episode is over."
        assert env.get_reward() == pytest.approx(1.0), (iid, env.info)
        assert env.info["f1_by_item"] == pytest.approx(1.0)
    assert env.episodes == 4


def test_no_submit_is_reward_zero_and_tools_after_the_end_answer_errors(rl_wh, rl_tasks):
    env = SearchWorldToolEnv(warehouse=rl_wh, record=False)
    assert env.web_search(query="anything").startswith("Error")  # before any reset
    iid = sorted(rl_tasks)[0]
    env.reset(world=WORLD, task=iid)
    assert not env.web_search(query=rl_tasks[iid].question[:40]).startswith("Error")
    assert env.get_reward() == 0.0  # never submitted (and the rollout is over now)
    assert env.web_extractor(url="https://example.com").startswith("Error")
    env.reset(world=WORLD, task=iid, seed=3)
    assert env.submit("| not | a table |") == "Answer submitted; the episode is over."
    assert env.get_reward() == 0.0
    for call in (lambda: env.submit("again"), lambda: env.web_search(query="x"), lambda: env.dict_memory(operation="retrieve_all")):
        assert call().startswith("Error: the episode is over")


def test_shaped_reward_comes_from_the_reward_config(rl_wh, rl_tasks):
    iid = sorted(rl_tasks)[1]
    plain = make_env_factory(warehouse=rl_wh, record=False)()
    shaped = make_env_factory(warehouse=rl_wh, record=False, reward=RewardConfig(format_reward=0.5, tool_call_penalty=0.01))()
    rewards = []
    for env in (plain, shaped):
        env.reset(world=WORLD, task=iid)
        answer = scripted_answer(rl_tasks[iid], lambda n, a, env=env: getattr(env, n)(**a))
        env.submit(answer)
        rewards.append(env.get_reward())
    assert rewards[1] == pytest.approx(rewards[0] + 0.5 - 0.01 * shaped.info["tool_calls"])
    assert shaped.info["tool_calls"] > 0


def test_reset_rejects_bad_rows(rl_wh, rl_tasks):
    env = SearchWorldToolEnv(warehouse=rl_wh, record=False)
    with pytest.raises(WorldforgeError, match="needs task"):
        env.reset(world=WORLD, prompt=[])
    with pytest.raises(WorldforgeError, match="no task"):
        env.reset(world=WORLD, task="nope")


# -- the prompt dataset -------------------------------------------------------------------------
def test_prompt_rows_one_per_task_and_seed_shuffled_reproducibly(rl_wh, rl_tasks):
    rows = prompt_rows(rl_wh, seeds=2)  # default worlds: every world with tasks
    assert len(rows) == 2 * len(rl_tasks)
    assert {(r["task"], r["seed"]) for r in rows} == {(t, s) for t in rl_tasks for s in (0, 1)}
    assert all(r["world"] == WORLD and r["prompt"] == [{"role": "user", "content": INSTRUCTION}] for r in rows)
    a, b = prompt_rows(rl_wh, [WORLD], shuffle_seed=7), prompt_rows(rl_wh, [WORLD], shuffle_seed=7)
    assert a == b and [r["task"] for r in a] != sorted(rl_tasks)
    with pytest.raises(Exception, match="perturbation"):
        prompt_rows(rl_wh, [WORLD], perturbations='{"perturbations": [{"kind": "nope"}]}')


def test_prompt_rows_mix_both_families_and_deep_rows_earn_their_correctness(rl_wh, rl_tasks):
    from worldforge.rl import world_tasks
    from worldforge.rl.trl import DEEP_INSTRUCTION

    deep = world_tasks(WORLD, rl_wh, "deep")
    rows = prompt_rows(rl_wh, [WORLD], family="both", shuffle_seed=1)
    assert len(rows) == len(rl_tasks) + len(deep)
    by_family = {f: [r for r in rows if r["family"] == f] for f in ("wide", "deep")}
    assert {r["task"] for r in by_family["deep"]} == set(deep) and {r["task"] for r in by_family["wide"]} == set(rl_tasks)
    assert all(r["prompt"][0]["content"] == DEEP_INSTRUCTION for r in by_family["deep"])
    assert all(r["prompt"][0]["content"] == INSTRUCTION for r in by_family["wide"])
    assert {r["task"] for r in prompt_rows(rl_wh, [WORLD], family="deep")} == set(deep)
    env = SearchWorldToolEnv(warehouse=rl_wh, record=False)
    for row in by_family["deep"][:3]:
        text = env.reset(**row)
        assert "Exact Answer:" in text and deep[row["task"]].question in text
        env.submit(answer=scripted_answer(deep[row["task"]], env._call))
        assert env.get_reward() == 1.0
    row = by_family["deep"][0]
    env.reset(**row)
    env.submit(answer="Explanation: none\nExact Answer: Nobody At All\nConfidence: 5%")
    assert env.get_reward() == 0.0
    with pytest.raises(WorldforgeError, match="unknown task family"):
        prompt_rows(rl_wh, [WORLD], family="all of them")


def test_write_prompt_dataset_is_atomic(rl_wh, tmp_path, monkeypatch):
    import datasets

    out = tmp_path / "ds"
    write_prompt_dataset(out, rl_wh, [WORLD], seeds=1)
    before = sorted(p.name for p in out.iterdir())

    def boom(self, *a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(datasets.Dataset, "save_to_disk", boom)
    with pytest.raises(OSError, match="disk full"):
        write_prompt_dataset(out, rl_wh, [WORLD], seeds=3)
    monkeypatch.undo()
    assert sorted(p.name for p in out.iterdir()) == before
    assert len(datasets.load_from_disk(str(out))) == len(prompt_rows(rl_wh, [WORLD]))
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]  # no temporary folder left behind


# -- the CLI --------------------------------------------------------------------------------------
def test_cli_writes_a_dataset_whose_rows_reset_the_environment(rl_wh, rl_tasks, tmp_path):
    import datasets

    from worldforge.cli import app

    out = tmp_path / "prompts"
    res = CliRunner().invoke(app, ["rl", "dataset", "--worlds", WORLD, "-o", str(out), "--seeds", "2",
                                   "--perturbations", "default", "--warehouse", str(rl_wh)])
    assert res.exit_code == 0, res.output
    assert f"{2 * len(rl_tasks)} rows" in res.output
    ds = datasets.load_from_disk(str(out))
    assert len(ds) == 2 * len(rl_tasks)
    assert set(ds.column_names) == {"prompt", "world", "task", "family", "scenario", "seed", "perturbations"}
    env = SearchWorldToolEnv(warehouse=rl_wh, record=False)
    for row in ds.select(range(3)):
        text = env.reset(**row)
        assert rl_tasks[row["task"]].question in text and row["perturbations"] == "default"
        assert not env.web_search(query="release").startswith("Error: the episode")


@pytest.mark.parametrize("args, message", [
    (["--worlds", "atlantis_9999"], "no such world"),
    (["--worlds", WORLD, "--seeds", "0"], "seeds must be at least 1"),
    (["--worlds", WORLD, "--perturbations", "{not json"], "not valid JSON"),
])
def test_cli_user_errors_exit_2_without_traceback(rl_wh, tmp_path, args, message):
    from worldforge.cli import app

    out = tmp_path / "prompts"
    res = CliRunner().invoke(app, ["rl", "dataset", "-o", str(out), "--warehouse", str(rl_wh), *args])
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output
    assert not out.exists()


def test_cli_mixes_the_families(rl_wh, rl_tasks, tmp_path):
    import datasets

    from worldforge.cli import app
    from worldforge.rl import world_tasks

    deep = world_tasks(WORLD, rl_wh, "deep")
    out = tmp_path / "mixed"
    res = CliRunner().invoke(app, ["rl", "dataset", "--worlds", WORLD, "-o", str(out), "--family", "both", "--warehouse", str(rl_wh)])
    assert res.exit_code == 0, res.output
    assert f"{len(rl_tasks) + len(deep)} rows ({len(rl_tasks)} wide, {len(deep)} deep;" in res.output
    assert sorted(set(datasets.load_from_disk(str(out))["family"])) == ["deep", "wide"]
    res = CliRunner().invoke(app, ["rl", "dataset", "--worlds", WORLD, "-o", str(tmp_path / "x"), "--family", "tall", "--warehouse", str(rl_wh)])
    assert res.exit_code == 2 and "unknown task family 'tall'" in res.output and "Traceback" not in res.output


def test_cli_world_without_tasks_is_a_user_error(rl_wh, tmp_path):
    import shutil

    from worldforge.cli import app

    wh = tmp_path / "wh"
    wh.mkdir()
    shutil.copy(rl_wh.world(WORLD), wh / "bare_world.duckdb")  # a world file is a DuckDB file; a copy without the tasks table
    import duckdb

    con = duckdb.connect(str(wh / "bare_world.duckdb"))
    con.execute("DROP VIEW IF EXISTS v_tasks")
    con.execute("DROP TABLE search_tasks")
    con.close()
    res = CliRunner().invoke(app, ["rl", "dataset", "-o", str(tmp_path / "p"), "--warehouse", str(wh)])
    assert res.exit_code == 2, res.output
    assert "tasks" in res.output and "Traceback" not in res.output


# -- a real GRPOTrainer -----------------------------------------------------------------------------
def _tool_calling_tiny_model(path, rows, tools) -> None:
    """A tiny Qwen2 taught to answer every prompt with one web_search tool call (Qwen3's format)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen3_chat_template

    from worldforge.llm.tiny import build_tiny_tokenizer

    env = SearchWorldToolEnv(warehouse=rows[0]["_wh"], record=False)
    call = {"name": "web_search", "arguments": {"query": WORLD.replace("_", " ")}}
    target = f"<tool_call>\n{json.dumps(call)}\n</tool_call><|im_end|>"
    convs = [[{"role": "user", "content": r["prompt"][0]["content"] + env.reset(**{k: v for k, v in r.items() if k != "_wh"})}] for r in rows]
    probe = build_tiny_tokenizer(path, vocab_size=300, texts=["x"])  # only renders the chat template
    probe.chat_template = qwen3_chat_template
    texts = [probe.apply_chat_template(m, tools=tools, tokenize=False, add_generation_prompt=True) + target for m in convs]
    build_tiny_tokenizer(path, vocab_size=1024, texts=texts * 4)
    saved = AutoTokenizer.from_pretrained(path)
    saved.chat_template = qwen3_chat_template
    saved.save_pretrained(path)
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(saved), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
                         num_key_value_heads=1, max_position_embeddings=4096, tie_word_embeddings=True,
                         eos_token_id=saved.convert_tokens_to_ids("<|im_end|>"), pad_token_id=saved.convert_tokens_to_ids("<|endoftext|>"))
    config.save_pretrained(path)
    # with config.json beside it, AutoTokenizer loads the model type's tokenizer class (Qwen2's), which splits
    # text its own way: train on exactly what GRPOTrainer will load
    tok = AutoTokenizer.from_pretrained(path)
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = config.eos_token_id
    model.generation_config.pad_token_id = config.pad_token_id
    # one padded batch of every conversation; the loss is on the assistant's tool call only
    target_ids = tok(target, add_special_tokens=False)["input_ids"]
    prompts = [tok.apply_chat_template(m, tools=tools, tokenize=True, add_generation_prompt=True, return_dict=False) for m in convs]
    width = max(len(p) for p in prompts) + len(target_ids)
    ids = torch.full((len(prompts), width), config.pad_token_id)
    labels = torch.full((len(prompts), width), -100)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        seq = torch.tensor(p + target_ids)
        ids[i, : len(seq)], mask[i, : len(seq)] = seq, 1
        labels[i, len(p) : len(seq)] = torch.tensor(target_ids)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(400):
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if loss.item() < 0.002:
            break
    model.save_pretrained(path)
    # the model as GRPOTrainer loads it answers the first prompt with the tool call, greedily
    reloaded = AutoModelForCausalLM.from_pretrained(path).eval()
    out = reloaded.generate(torch.tensor([prompts[0]]), max_new_tokens=len(target_ids) + 4, do_sample=False)
    assert tok.decode(out[0][len(prompts[0]):]) == target, (loss.item(), tok.decode(out[0][len(prompts[0]):]))


@pytest.mark.trl
@pytest.mark.timeout(1800)  # up to 400 steps of a tiny model on 2-3k-token prompts: on two busy cores past the suite's 600 s
def test_grpo_trainer_trains_with_the_environment_factory(rl_wh, rl_tasks, tmp_path):
    import torch
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    torch.set_num_threads(2)
    dataset = prompt_dataset(rl_wh, [WORLD], shuffle_seed=0)
    dataset = dataset.select(range(4))
    rows = [dict(r, _wh=rl_wh) for r in dataset]
    probe = SearchWorldToolEnv(warehouse=rl_wh, record=False)
    tools = [getattr(probe, n) for n in sorted(TOOLS)]
    model_dir = tmp_path / "tiny"
    _tool_calling_tiny_model(model_dir, rows, tools)

    made: list[SearchWorldToolEnv] = []

    def factory() -> SearchWorldToolEnv:
        made.append(make_env_factory(warehouse=rl_wh, record=False)())
        return made[-1]

    args = GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=96, temperature=0.2, max_tool_calling_iterations=2, learning_rate=1e-4, logging_steps=1,
                      use_cpu=True, bf16=False, report_to="none", save_strategy="no", seed=0, dataloader_num_workers=0)
    trainer = GRPOTrainer(model=str(model_dir), args=args, train_dataset=dataset,
                          processing_class=AutoTokenizer.from_pretrained(model_dir), environment_factory=factory)
    trainer.train()

    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert len(logs) == 2 and trainer.state.global_step == 2
    rewards = [entry["rewards/SearchWorldToolEnv/mean"] for entry in logs]
    assert all(r == r for r in rewards)  # logged, not NaN (the reward is 0.0: the tiny model never submits)
    assert sum(e.episodes for e in made) >= 4  # 2 steps x 2 generations
    calls = sum(e.total_tool_calls for e in made)
    assert calls > 0  # the rollouts called the environment's tools through TRL's tool-calling loop
    assert any(entry.get("tools/call_frequency", 0) > 0 for entry in logs)

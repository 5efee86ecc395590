"""World-model client throughput against a real ``vllm serve``: worldforge's client vs vLLM's own.

Starts ``vllm serve`` on loopback (the tiny random-init model built here, or ``--model DIR``
for a realistic one on a GPU machine), then sends N chat requests at concurrency C twice:

1. **baseline** — vLLM's own benchmark client (``vllm.benchmarks.serve``, the code behind
   ``vllm bench serve``) with ``--backend openai-chat``, random prompts of ``--input-len`` tokens
   and ``--output-len`` tokens each (``--ignore-eos``);
2. **worldforge** — :class:`worldforge.llm.OpenAIBackend` with the same N, C, prompt length and
   ``max_tokens``, ``ignore_eos`` passed through.

For each run it prints the client's requests/s and tokens/s next to what the server itself did
in that window (deltas of its ``/metrics`` counters: requests finished, prompt and generation
tokens), and the ratio of server token throughput, worldforge / baseline (target: >= 0.90).

    python bench/world_model.py [-n 256] [-c 32] [--input-len 128] [--output-len 32] [--model DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worldforge.llm import GenerationParams, OpenAIBackend, WorldModelRequest  # noqa: E402
from worldforge.llm.server import VLLMServer  # noqa: E402


def server_window(server: VLLMServer, fn) -> tuple[float, dict[str, float]]:
    before = server.metrics()
    t0 = time.perf_counter()
    fn()
    wall = time.perf_counter() - t0
    after = server.metrics()
    keys = ("vllm:request_success_total", "vllm:prompt_tokens_total", "vllm:generation_tokens_total")
    return wall, {k: after.get(k, 0) - before.get(k, 0) for k in keys}


def run_vllm_bench(server: VLLMServer, model: str, n: int, c: int, input_len: int, output_len: int, out_dir: Path) -> None:
    cmd = [sys.executable, "-c", "import sys; from vllm.benchmarks.serve import add_cli_args, main; "
           "from vllm.utils.argparse_utils import FlexibleArgumentParser as P; p = P(); add_cli_args(p); main(p.parse_args(sys.argv[1:]))",
           "--backend", "openai-chat", "--base-url", f"http://127.0.0.1:{server.port}", "--endpoint", "/v1/chat/completions",
           "--model", model, "--tokenizer", model, "--dataset-name", "random", "--random-input-len", str(input_len),
           "--random-output-len", str(output_len), "--num-prompts", str(n), "--max-concurrency", str(c), "--ignore-eos",
           "--disable-tqdm", "--seed", "0", "--save-result", "--result-dir", str(out_dir), "--result-filename", "vllm_bench.json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ | {"HF_HUB_OFFLINE": "1"})
    if proc.returncode != 0:
        raise SystemExit(f"vllm bench serve failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")


def run_worldforge(server: VLLMServer, n: int, c: int, input_len: int, output_len: int, tokenizer) -> dict:
    rng = random.Random(0)
    special = set(tokenizer.all_special_ids)
    ids = [i for i in range(len(tokenizer)) if i not in special]

    def prompt() -> str:  # as vLLM's random dataset does: decode random ids, re-encode to length
        text = tokenizer.decode([rng.choice(ids) for _ in range(input_len)])
        return tokenizer.decode(tokenizer(text, add_special_tokens=False)["input_ids"][:input_len])

    reqs = [WorldModelRequest(id=str(i), messages=({"role": "user", "content": prompt()},)) for i in range(n)]
    backend = OpenAIBackend(base_url=server.base_url, concurrency=c, extra_body={"ignore_eos": True, "min_tokens": output_len})
    backend.load()
    params = GenerationParams(max_tokens=output_len, temperature=1.0, seed=None)
    result = {}

    def go():
        result["r"] = backend.generate(reqs, 1, params)
    wall, server_side = server_window(server, go)
    r = result["r"]
    return {"wall": wall, "server": server_side, "ok": len(r.completions), "failed": len(r.failures), "completion_tokens": r.completion_tokens}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=256)
    ap.add_argument("-c", type=int, default=32)
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=32)
    ap.add_argument("--model", help="a model folder (default: build the tiny model)")
    ap.add_argument("--max-model-len", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from transformers import AutoTokenizer

    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model is None:
            from worldforge.llm.tiny import build_tiny_model

            model = str(build_tiny_model(Path(tmp) / "tiny", hidden_size=128))
        tokenizer = AutoTokenizer.from_pretrained(model)
        with VLLMServer(model, max_model_len=args.max_model_len, cache_dir=ROOT / ".cache") as server:
            print(f"vllm serve {model} at {server.base_url}; N={args.n} C={args.c} input~{args.input_len} output={args.output_len} tokens; {args.rounds} alternating rounds")
            run_worldforge(server, min(args.n, 16), args.c, args.input_len, args.output_len, tokenizer)  # warm-up
            rounds = []
            for _ in range(args.rounds):  # alternate the clients: this machine's load drifts
                _, srv_b = server_window(server, lambda: run_vllm_bench(server, model, args.n, args.c, args.input_len, args.output_len, Path(tmp)))
                bench = json.loads((Path(tmp) / "vllm_bench.json").read_text())
                wf = run_worldforge(server, args.n, args.c, args.input_len, args.output_len, tokenizer)
                rounds.append((bench, srv_b, wf))
    print(f"{'client':<26}{'done':>6}{'wall s':>9}{'req/s':>9}{'out tok/s':>11}   server: {'req':>5}{'prompt tok/s':>14}{'gen tok/s':>11}")
    ratios = []
    for bench, srv_b, wf in rounds:
        wall_b = bench["duration"]  # the window excludes the benchmark process's start-up
        rows = [
            ("vllm bench serve", bench["completed"], wall_b, bench["request_throughput"], bench["output_throughput"], srv_b),
            ("worldforge OpenAIBackend", wf["ok"], wf["wall"], wf["ok"] / wf["wall"], wf["completion_tokens"] / wf["wall"], wf["server"]),
        ]
        server_tps = []
        for name, done, wall, rps, otps, srv in rows:
            p_tps, g_tps = srv["vllm:prompt_tokens_total"] / wall, srv["vllm:generation_tokens_total"] / wall
            server_tps.append(p_tps + g_tps)
            print(f"{name:<26}{done:>6}{wall:>9.2f}{rps:>9.1f}{otps:>11.1f}   server: {srv['vllm:request_success_total']:>5.0f}{p_tps:>14.1f}{g_tps:>11.1f}")
        ratios.append(server_tps[1] / server_tps[0])
        if wf["failed"]:
            print(f"note: {wf['failed']} request(s) failed")
    bench, srv_b, wf = rounds[-1]
    print(f"prompt tokens per request: vllm bench {srv_b['vllm:prompt_tokens_total'] / max(1, srv_b['vllm:request_success_total']):.0f}, "
          f"worldforge {wf['server']['vllm:prompt_tokens_total'] / max(1, wf['server']['vllm:request_success_total']):.0f}")
    print("server token throughput under worldforge's client / under vLLM's benchmark client, per round: "
          + ", ".join(f"{r:.2f}" for r in ratios) + f"; median {statistics.median(ratios):.2f} (target >= 0.90)")


if __name__ == "__main__":
    main()

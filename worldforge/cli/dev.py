"""``worldforge dev tiny-model | serve``: a tiny local chat model and a real ``vllm serve`` of it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from worldforge.cli._common import out, user_errors

app = typer.Typer(help="Developer tools: a tiny local model, a local vLLM server.", no_args_is_help=True)


@app.command("tiny-model")
def tiny_model(
    out_dir: Annotated[Path, typer.Argument(help="Folder to write the model to.")],
    hidden_size: Annotated[int, typer.Option(help="Model width (64-128 keeps it tiny).")] = 64,
    layers: Annotated[int, typer.Option(help="Decoder layers.")] = 2,
    seed: Annotated[int, typer.Option(help="Seeds the tokenizer text and the weights.")] = 0,
) -> None:
    """Build a tiny random-init Qwen2 chat model (BPE tokenizer trained here, ChatML template).

    Its text is noise: it exists to exercise servers and pipelines without a download.
    """
    from worldforge.llm.tiny import build_tiny_model

    with user_errors():
        path = build_tiny_model(out_dir, hidden_size=hidden_size, layers=layers, seed=seed)
    out.print(f"tiny model written to {path} (serve it: worldforge dev serve {path})")


@app.command("serve")
def serve(
    model: Annotated[Path, typer.Argument(help="A model folder.")],
    port: Annotated[Optional[int], typer.Option(help="Port (default: WORLDFORGE_VLLM_PORT).", show_default=False)] = None,
    max_model_len: Annotated[Optional[int], typer.Option(help="Context length in tokens (default: VLLMServer's, 4096).", show_default=False)] = None,
    cache_dir: Annotated[Optional[Path], typer.Option(help="vLLM and inductor caches (default: WORLDFORGE_CACHE_DIR).", show_default=False)] = None,
) -> None:
    """Run `vllm serve` for a local model on WORLDFORGE_HOST (loopback) until Ctrl-C (stops every engine process)."""
    from worldforge.llm.server import VLLMServer
    from worldforge.settings import get_settings

    with user_errors():
        server = VLLMServer(model, port=port or get_settings().vllm_port, cache_dir=cache_dir, **({"max_model_len": max_model_len} if max_model_len else {}))
        server.serve_forever(on_ready=lambda s: out.print(f"serving {model} at {s.base_url} (log: {s.log_path}); Ctrl-C stops it"))

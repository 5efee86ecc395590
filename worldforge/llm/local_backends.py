"""In-process backends: ``vllm`` (``vllm.LLM`` batch generation) and ``transformers``
(``AutoModelForCausalLM.generate``, for small local models).

Both import their packages in ``load()`` only. The vLLM engine runs its core in a child
process; :meth:`VLLMBackend.unload` shuts it down explicitly
(``llm.llm_engine.engine_core.shutdown()``), also when generation raised, or the child
keeps the interpreter from exiting.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from pydantic import Field, PrivateAttr

from worldforge.llm.base import (
    BackendError,
    Completion,
    Failure,
    GenerationParams,
    GenerationResult,
    OnResult,
    WorldModelBackend,
    WorldModelRequest,
    missing_extra,
    record,
)

log = logging.getLogger(__name__)


class VLLMBackend(WorldModelBackend):
    """``vllm.LLM`` in this process (offline batch inference).

    Attributes:
        model: a model folder or hub name (hub names need network access).
        max_model_len: the context length the engine reserves for.
        enforce_eager: skip CUDA-graph / compile warm-up (faster start, the CPU default).
        memory_fraction: ``gpu_memory_utilization`` (on the CPU build: the fraction of RAM).
        engine_kwargs: more ``vllm.LLM`` arguments. Structured output uses the guidance backend
            without free whitespace, as ``vllm serve`` does here.
    """

    kind = "vllm"
    supports_json_schema = True

    max_model_len: int = Field(1024, ge=16)
    enforce_eager: bool = True
    memory_fraction: float = Field(0.3, gt=0, le=1)
    engine_kwargs: dict[str, Any] = Field(default_factory=dict)
    _llm: Any = PrivateAttr(None)

    def load(self) -> None:
        """Start the ``vllm.LLM`` engine for ``model``. Idempotent.

        Raises:
            BackendError: no model is given, ``vllm`` is not installed (the message names the install), or the engine
                fails to start.
        """
        if self._llm is not None:
            return
        if not self.model:
            raise BackendError("the 'vllm' backend needs a model (a folder or a hub name)")
        try:
            import vllm
        except ImportError:
            raise missing_extra("vllm", self.kind) from None
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
        from worldforge.llm.server import STRUCTURED_OUTPUTS

        kwargs = {"max_model_len": self.max_model_len, "enforce_eager": self.enforce_eager, "gpu_memory_utilization": self.memory_fraction,
                  "structured_outputs_config": dict(STRUCTURED_OUTPUTS),
                  # seeded sampling with chunked prefill crashes vllm-cpu 0.32's engine (see server.py)
                  "enable_chunked_prefill": False, "max_num_batched_tokens": self.max_model_len} | self.engine_kwargs
        try:
            self._llm = vllm.LLM(model=self.model, **kwargs)
        except Exception as exc:  # vLLM raises many kinds at start-up
            raise BackendError(f"vLLM could not load {self.model!r}: {type(exc).__name__}: {exc}") from exc

    def unload(self) -> None:
        """Shut the engine core down, its child process included. Idempotent; a failed shutdown is logged, not raised."""
        llm, self._llm = self._llm, None
        if llm is None:
            return
        try:
            llm.llm_engine.engine_core.shutdown()
        except Exception as exc:  # pragma: no cover - best effort at teardown
            log.warning("vLLM engine shutdown failed: %s", exc)

    def _generate(self, requests: list[WorldModelRequest], n: int, params: GenerationParams, on_result: OnResult | None) -> GenerationResult:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        sampling = SamplingParams(
            n=n, temperature=params.temperature, top_p=params.top_p, max_tokens=params.max_tokens, seed=params.seed,
            stop=list(params.stop) or None,
            structured_outputs=StructuredOutputsParams(json=params.json_schema) if params.json_schema is not None else None,
        )
        result = GenerationResult()
        # requests too long for the context are failures of their own, not of the batch
        tokenizer = self._llm.get_tokenizer()
        ok: list[WorldModelRequest] = []
        for req in requests:
            try:
                ids = tokenizer.apply_chat_template(list(req.messages), add_generation_prompt=True, tokenize=True)
            except Exception as exc:
                record(result, req, Failure(request_id=req.id, reason=f"chat template failed: {exc}"), on_result)
                continue
            if len(_ids(ids)) >= self.max_model_len:
                record(result, req, Failure(request_id=req.id, reason=f"prompt of {len(_ids(ids))} tokens does not fit max_model_len {self.max_model_len}"), on_result)
                continue
            ok.append(req)
        if ok:
            outputs = self._llm.chat([list(r.messages) for r in ok], sampling, use_tqdm=False)
            for req, out in zip(ok, outputs, strict=True):
                record(result, req, [
                    Completion(request_id=req.id, index=i, text=o.text, finish_reason=o.finish_reason,
                               prompt_tokens=len(out.prompt_token_ids or ()), completion_tokens=len(o.token_ids))
                    for i, o in enumerate(out.outputs)
                ], on_result)
        return result


def _ids(encoded: Any) -> list[int]:
    if isinstance(encoded, dict) or hasattr(encoded, "keys"):
        encoded = encoded["input_ids"]
    return list(encoded)


class TransformersBackend(WorldModelBackend):
    """``AutoModelForCausalLM.generate`` on the CPU (or ``device``), for small local models.

    Attributes:
        model: a model folder (with a tokenizer that has a chat template).
        device: a torch device name.
        batch_size: prompts per ``generate`` call.
    """

    kind = "transformers"
    supports_json_schema = False

    device: str = "cpu"
    batch_size: int = Field(8, ge=1)
    _model: Any = PrivateAttr(None)
    _tokenizer: Any = PrivateAttr(None)

    def load(self) -> None:
        """Load the tokenizer and the model onto ``device`` in eval mode (left padding; EOS as pad when none is set). Idempotent.

        Raises:
            BackendError: no model is given, ``torch`` or ``transformers`` is not installed, the model cannot be
                loaded, or its tokenizer has no chat template.
        """
        if self._model is not None:
            return
        if not self.model:
            raise BackendError("the 'transformers' backend needs a model folder")
        try:
            import torch  # noqa: F401
        except ImportError:
            raise missing_extra("torch", self.kind) from None
        try:
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise missing_extra("transformers", self.kind) from None
        try:
            tok = AutoTokenizer.from_pretrained(self.model)
            model = AutoModelForCausalLM.from_pretrained(self.model).to(self.device).eval()
        except (OSError, ValueError) as exc:
            raise BackendError(f"transformers could not load {self.model!r}: {exc}") from exc
        if not tok.chat_template:
            raise BackendError(f"the tokenizer of {self.model!r} has no chat template; set one (tokenizer.chat_template) and save it")
        tok.padding_side = "left"
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        self._model, self._tokenizer = model, tok

    def unload(self) -> None:
        """Drop the model and the tokenizer. Idempotent."""
        self._model = self._tokenizer = None

    def _generate(self, requests: list[WorldModelRequest], n: int, params: GenerationParams, on_result: OnResult | None) -> GenerationResult:
        import torch

        tok, model = self._tokenizer, self._model
        limit = getattr(model.config, "max_position_embeddings", 2048)
        result = GenerationResult()
        for start in range(0, len(requests), self.batch_size):
            batch = list(requests[start: start + self.batch_size])
            prompts, kept = [], []
            for req in batch:
                text = tok.apply_chat_template(list(req.messages), add_generation_prompt=True, tokenize=False)
                if len(tok(text)["input_ids"]) + params.max_tokens > limit:
                    record(result, req, Failure(request_id=req.id, reason=f"prompt plus max_tokens exceeds the model's {limit} positions"), on_result)
                    continue
                prompts.append(text)
                kept.append(req)
            if not kept:
                continue
            enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
            if params.seed is not None:
                torch.manual_seed(params.seed + start)
            sample = params.temperature > 0
            with torch.no_grad():
                out = model.generate(
                    **enc, max_new_tokens=params.max_tokens, do_sample=sample, num_return_sequences=n,
                    temperature=params.temperature if sample else None, top_p=params.top_p if sample else None,
                    pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                )
            width = enc["input_ids"].shape[1]
            for j, req in enumerate(kept):
                prompt_tokens = int(enc["attention_mask"][j].sum())
                comps = []
                for i in range(n):
                    ids = out[j * n + i, width:].tolist()
                    ended = tok.eos_token_id in ids
                    if ended:
                        ids = ids[: ids.index(tok.eos_token_id)]
                    text = tok.decode(ids, skip_special_tokens=True)
                    stop_hit = next((s for s in params.stop if s in text), None)
                    if stop_hit:
                        text = text[: text.index(stop_hit)]
                    comps.append(Completion(request_id=req.id, index=i, text=text, finish_reason="stop" if ended or stop_hit else "length",
                                            prompt_tokens=prompt_tokens, completion_tokens=len(ids)))
                record(result, req, comps, on_result)
        return result

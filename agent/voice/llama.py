"""llama.cpp in this process: what the model's own process (agent.voice.worker) runs.

The child side of the model process: it imports the shared vocabulary (agent.voice.model,
agent.voice.model_file) and never the daemon's side (agent.voice.process, agent.voice.backends),
as Ollama's runner never imports its server.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

from agent.voice.model import CHAT_SAMPLING, Chunk, Failure, Message, Sampling
from agent.voice.model_file import check_gguf, resolve_model_path
from policies.errors import BadArgumentError
from policies.i18n import _

log = logging.getLogger("alma.model")


class LlamaBackend:
    """llama.cpp in this process: the model process's (agent.voice.worker), never the daemon's."""

    kind = "llama-cpp"
    failure: Failure | None = None

    def __init__(self, llama: Any, path: str, threads: int, lora: str | None = None) -> None:
        self.llama = llama
        self.path = path
        self.lora = lora
        self.threads: int | None = threads
        self.n_ctx = int(llama.n_ctx())

    @classmethod
    def load(
        cls, path: str, *, context_tokens: int, threads: int, lora: str | None = None
    ) -> LlamaBackend:
        """``lora``: a LoRA adapter applied to the model (llama-cpp-python's ``lora_path``,
        at its full scale), checked to fit by the daemon before it comes here."""
        model = resolve_model_path(path)
        check_gguf(model)
        from llama_cpp import Llama  # heavy (ctypes, numpy): only when a model is wanted

        def open_model(n_ctx: int) -> Any:
            llama = Llama(
                model_path=str(model),
                n_ctx=n_ctx,
                n_threads=threads,
                lora_path=lora,
                verbose=False,
            )
            # llama-cpp-python 0.3 takes a NULL adapter for a loaded one (it compares the
            # pointer with None): an adapter llama.cpp refused is caught here, not mid-answer.
            if lora is not None and not getattr(llama, "_lora_adapter", None):
                llama.close()
                raise refused_adapter
            return llama

        refused_adapter = BadArgumentError(
            _(
                "llama.cpp could not apply the adapter {adapter} to {path}; check that it was "
                "converted for this model with convert_lora_to_gguf.py.",
                adapter=lora,
                path=model,
            )
        )
        try:
            llama = open_model(context_tokens)
        except (ValueError, RuntimeError, OSError) as exc:
            log.warning("llama.cpp refused %s (adapter %s): %s", model, lora, exc)
            if lora is not None and "lora" in str(exc).lower():  # its words for the adapter
                raise refused_adapter from None
            raise BadArgumentError(
                _(
                    "{path} could not be loaded as a model (it may be truncated, damaged or of "
                    "an architecture this llama.cpp does not know); download it again or "
                    "choose another GGUF file.",
                    path=model,
                )
            ) from None
        if not llama.metadata.get("tokenizer.chat_template"):
            llama.close()
            raise BadArgumentError(
                _(
                    "{path} has no chat template, so it cannot hold a conversation (it is "
                    "probably a base model); choose an instruction-tuned (Instruct or Chat) GGUF.",
                    path=model,
                )
            )
        # A context larger than the model was trained on only gives it text it cannot read.
        trained = int(llama._model.n_ctx_train())  # no public accessor in 0.3
        if 0 < trained < llama.n_ctx():
            llama.close()
            llama = open_model(trained)
        return cls(llama, str(model), threads, lora)

    def count_tokens(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
        sampling: Sampling = CHAT_SAMPLING,
    ) -> Iterator[Chunk]:
        kwargs: dict[str, Any] = {
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": sampling.top_k,
            "repeat_penalty": sampling.repeat_penalty,
            "stop": list(sampling.stop),
        }
        if json_schema is not None:
            kwargs = {"temperature": 0.0, "response_format": json_format(json_schema)}
        chunks = self.llama.create_chat_completion(
            messages=list(messages), max_tokens=max_tokens, stream=True, **kwargs
        )
        return self._answer(chunks)

    def _answer(self, chunks: Iterator[dict[str, Any]]) -> Iterator[Chunk]:
        try:
            yield from _pieces(chunks)
        finally:
            self._free_sampler()

    def _free_sampler(self) -> None:
        """llama-cpp-python makes a sampler chain for every answer and frees it only when
        Python's cycle collector reaches it (its free callback refers to it), which can be
        hundreds of answers later: the process's memory would grow with every answer until
        then. The chain is freed here, at the end of its answer; the next answer makes its own.
        """
        sampler = getattr(self.llama, "_sampler", None)  # no public accessor in 0.3
        if sampler is not None:
            sampler.close()
            self.llama._sampler = None

    def close(self) -> None:
        self.llama.close()


def json_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_object", "schema": schema}


def _pieces(chunks: Iterator[dict[str, Any]]) -> Iterator[Chunk]:
    try:
        for chunk in chunks:
            choice = chunk["choices"][0]
            text = choice.get("delta", {}).get("content") or ""
            yield text, choice.get("finish_reason")
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()

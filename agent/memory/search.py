"""Hybrid search: the embedding and a lexical signal, fused by rank, metadata as features.

- Semantic: cosine between the query ("query: " prefix) and the memories ("passage: "), the
  nearest ``SEMANTIC`` from Chroma, filters applied there.
- Lexical: BM25 over folded words (SQLite FTS5, ``MemoryStateDB.lexicon``), light Spanish
  stems matched as prefixes, so names, numbers and rare words an embedding blurs count. Its
  hits outside the semantic list are fetched with their vectors and the same filters, so every
  candidate has its cosine from the one query embedding (never a second embedding call).
- Fusion: a linear score over ``RANK_FEATURES`` (the cosine, ``1/(k + rank)`` of each list,
  the share of the question's words the memory holds, whether it is a daily summary, its
  centrality among the candidates), its weights (``Ranking``) fitted pairwise on the fitting
  splits of both labelled sets (tests/support/memory_eval.py ``calibrate``) and kept with the embedder's
  calibration, since they weigh its cosines; plus small metadata terms (importance, layer, a tag or project the question names,
  recency, use) that break near-ties (``RankWeights``).

A result's public ``score`` (contract §3: best first, with a score) is ``chance``: the rank
model's probability that this memory is the one asked for among all the candidates (a softmax
of ``fused``, the Bradley-Terry reading of a pairwise fit), so it falls as the list goes down
and stays in 0-1. ``why`` keeps the cosine, ``fused`` and ``matched`` (the question's words
found in the memory).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import InitVar, dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from policies.results import JSONObject, Why
from state.memory import MemoryRecord, MemoryStore
from state.memory.embedder import Ranking, Selection, Vectors
from state.memory.models import RankFacts
from state.memory.normalize import search_terms, words

#: Candidates from each list. 40 + 40 keep a right answer ranked ~30th by one signal and
#: high by the other; more cost Chroma time and add nothing on the check sets.
SEMANTIC = 40
LEXICAL = 40
#: A search hands no memory whose score would show as 0.00: a list is not filled to its
#: limit with what the rank model gives no chance of being the one asked for.
SHOWN = 0.005
#: How far below the last stated memory a question's rank score goes (the rank model's
#: scores are log-odds: a question is then several times less likely than any of them).
QUESTION_STEP = 2.0


#: The rank model's features, in the order of ``Ranking.weights``.
RANK_FEATURES = ("cosine", "semantic", "lexical", "matched_share", "summary", "centrality")
#: The direction each feature may push the rank (0: either). A fit that weighs one against
#: its meaning is reading its sample (on the synthetic set the questions paraphrase while the
#: look-alikes share their words, so the lexical rank came out negative): calibration leaves
#: that feature out and fits again.
RANK_SIGNS = (1, 1, 1, 1, 0, -1)
#: What the answer model (``Selection`` in the embedder's calibration) reads of a candidate,
#: in the order of its weights: its cosine to the message; how far that is above the median
#: cosine of the message's ``SEMANTIC`` nearest candidates (what "close" means for this
#: message); how far its rank score is below the best candidate's; its lead over the best of
#: the other candidates (positive only for the best: how clearly it stands out, which holds in
#: a store of eight memories as in one of thousands, where the cosines' level does not); and
#: the share of the message's search terms it holds; and whether the message asks for a kind
#: of detail (a time, a date, an amount, a name...) that it does not hold (``asked.lacks``:
#: what a memory of the right subject that answers nothing looks like); and whether it lacks
#: a name the message names (``asked.unnamed``: a memory of another person or place). No
#: feature reads which words they are, so a fit cannot learn a set's wording: seven weights
#: and an intercept.
ANSWER_FEATURES = (
    "cosine",
    "above_typical",
    "below_best",
    "lead",
    "matched_share",
    "lacks",
    "unnamed",
)
#: Centrality is a candidate's mean cosine to the ``HUB`` nearest candidates (itself aside): a
#: memory as close to all of them as to the question is a generic one (a templated day, "comí
#: con X"), and a set of look-alikes crowds the top with such memories. Penalizing it is the hubness
#: correction of cross-lingual retrieval (CSLS), taken within the candidates: no extra query.
HUB = 10


@dataclass(frozen=True)
class RankWeights:
    """The metadata terms added to the rank model's score: small, they break near-ties."""

    #: The RRF constant: small, because the lists are short and the top matters most.
    k: float = 10.0
    importance: float = 0.002  # per point above 3
    distilled: float = 0.003  # L1 (added, facts, summaries) over raw log paragraphs
    tag: float = 0.01  # the question names one of the memory's tags or its project
    recency: float = 0.002  # decays with a half-life of a year
    use: float = 0.001  # per log2(1 + use_count)


WEIGHTS = RankWeights()


@dataclass
class Hit:
    """One candidate. The ranking reads its ``facts``; its full record (document and every
    field) is read from Chroma only for the hits a caller hands out (``load``)."""

    loaded: MemoryRecord | None
    score: float  # cosine similarity
    fused: float = 0.0
    chance: float = 0.0  # softmax of ``fused`` over the candidates: the public score
    answering: float = 0.0  # the answer model's chance that it answers (``answer_chances``)
    lacks: float = 0.0  # 1.0: it lacks the kind of detail the message asks for (``asked``)
    unnamed: float = 0.0  # 1.0: it lacks a name the message names (``asked.unnamed``)
    semantic_rank: int = 0  # 1-based, among all candidates by cosine
    lexical_rank: int = 0  # 1-based in the BM25 list; 0 when no word matched
    matched: list[str] = field(default_factory=list)  # set with the record (``load``)
    vector: Vectors | None = None
    known: InitVar[RankFacts | None] = None  # the facts, when the record is not loaded
    facts: RankFacts = field(init=False)

    def __post_init__(self, known: RankFacts | None) -> None:
        if known is None:
            if self.loaded is None:
                raise TypeError("a Hit needs its record or its facts")
            known = RankFacts.of(self.loaded)
        self.facts = known

    @property
    def id(self) -> str:
        return self.facts.id

    @property
    def record(self) -> MemoryRecord:
        if self.loaded is None:
            raise LookupError(f"memory {self.id}: its record was not read (search.load)")
        return self.loaded

    def why(self) -> Why:
        return {
            "cosine": round(self.score, 4),
            "fused": round(self.fused, 4),
            "semantic_rank": self.semantic_rank,
            "lexical_rank": self.lexical_rank,
            "matched": self.matched,
        }


def search(
    store: MemoryStore,
    query: str,
    limit: int,
    where: JSONObject | None = None,
    *,
    now: datetime | None = None,
    weights: RankWeights = WEIGHTS,
    hand_out: bool = False,
) -> list[Hit]:
    """The best ``limit`` memories for ``query``, fused rank first, with their records; those
    the rank model gives no chance (a score under ``SHOWN``) left out. With ``hand_out``,
    each is handed out as it is read (``MemoryStore.hand_out``: its record holds the new
    ``use_count``)."""
    found = candidates(store, query, where, now=now, weights=weights, records=False)
    hits = [h for h in found[:limit] if h.chance >= SHOWN]
    return load(store, hits, search_terms(query), hand_out=hand_out)


def candidates(
    store: MemoryStore,
    query: str,
    where: JSONObject | None = None,
    *,
    now: datetime | None = None,
    weights: RankWeights = WEIGHTS,
    semantic: int = SEMANTIC,
    lexical: int = LEXICAL,
    ranking: Ranking | None = None,
    embedding: Future[Vectors] | None = None,
    records: bool = True,
    outside: Sequence[Hit] = (),
) -> list[Hit]:
    """Every candidate of both lists, fused and sorted, each with its vector (``ranking``:
    another rank model than the embedder's, for calibration; ``embedding``: the query's
    vector from ``embed_soon``, if the caller started it; ``records=False``: the records are
    left for ``load`` to read, for the few hits a caller hands out; ``outside``: candidates
    that are not in the store, each with its vector and ``matched`` set, ranked with the
    others: the principles of system/principles.md, with ``records=False``)."""
    pending = embedding or embed_soon(store, query)
    terms = search_terms(query)
    lex_ids = store.lexical(terms, lexical)  # beside the embedding: it needs no vector
    vector = pending.result()
    found = {i: (cos, vec) for i, cos, vec in store.nearest(vector, semantic, where)}
    missing = [i for i in lex_ids if i not in found]
    extra = store.vectors(missing, where=where)
    for i in missing:
        if i in extra:  # in the lexical order: ties in the sort below keep it
            found[i] = (float(np.dot(extra[i], vector)), extra[i])
    facts = store.facts(list(found))
    hits = {
        i: Hit(None, cos, vector=vec, known=facts[i])
        for i, (cos, vec) in found.items()
        if i in facts  # archived between the two reads
    }
    for hit in outside:
        if hit.vector is not None:
            hit.score = float(np.dot(hit.vector, vector))
            hits[hit.id] = hit
    for rank, memory_id in enumerate((i for i in lex_ids if i in hits), start=1):
        hits[memory_id].lexical_rank = rank
    ordered = sorted(hits.values(), key=lambda h: -h.score)
    for rank, hit in enumerate(ordered, start=1):
        hit.semantic_rank = rank
    model = ranking or store.embedder.calibration.ranking
    if records:
        ordered = load(store, ordered, terms)
    if model.weights[RANK_FEATURES.index("matched_share")]:
        # What the lexical side sees of each candidate (its folded words and tags), read
        # from the lexicon: reading every candidate's record from Chroma costs more than the
        # whole search. ``load`` later sets ``matched`` from the text for what is shown.
        bodies = store.bodies([h.id for h in ordered])
        for hit in ordered:
            if hit.id in bodies:  # folded words already
                hit.matched = held_terms(terms, bodies[hit.id].split())
            elif hit.loaded is not None:
                hit.matched = matched_terms(terms, hit.loaded.content)
    query_keys = set(words(query))
    stamp = (now or datetime.now().astimezone()).timestamp()
    scores = rank_features(ordered, len(terms), weights.k) @ np.asarray(model.weights)
    for hit, score in zip(ordered, scores, strict=True):
        hit.fused = float(score) + _metadata(hit.facts, query_keys, stamp, weights)
    ordered.sort(key=lambda h: -h.fused)
    ordered = _questions_last(ordered)
    if ordered:
        fused = np.asarray([h.fused for h in ordered])
        odds = np.exp(fused - fused[0])
        for hit, p in zip(ordered, odds / odds.sum(), strict=True):
            hit.chance = float(p)
    return ordered


def answer_features(hits: list[Hit], n_terms: int) -> npt.NDArray[np.float64]:
    """One row of ``ANSWER_FEATURES`` per candidate (``hits``: a message's candidates, ranked,
    the person's questions left out; ``n_terms``: how many search terms the message has)."""
    if not hits:
        return np.zeros((0, len(ANSWER_FEATURES)))
    cosines = np.asarray([h.score for h in hits], dtype=np.float64)
    typical = float(np.median(np.sort(cosines)[::-1][:SEMANTIC]))
    fused = np.asarray([h.fused for h in hits], dtype=np.float64)
    order = np.argsort(-fused, kind="stable")
    best = float(fused[order[0]])
    second = float(fused[order[1]]) if len(hits) > 1 else best
    # Each candidate's lead over the best of the others: the best's over the second, every
    # other's over the best.
    lead = fused - np.where(np.arange(len(hits)) == order[0], second, best)
    share = [len(h.matched) / n_terms if n_terms else 0.0 for h in hits]
    lacks = [h.lacks for h in hits]
    unnamed = [h.unnamed for h in hits]
    return np.column_stack([cosines, cosines - typical, fused - best, lead, share, lacks, unnamed])


def answer_chances(hits: list[Hit], rule: Selection, n_terms: int) -> None:
    """Set each candidate's ``answering``: the answer model's chance that it answers."""
    if hits:
        z = answer_features(hits, n_terms) @ np.asarray(rule.weights) + rule.intercept
        z = np.clip(z, -50.0, 50.0)
        for hit, p in zip(hits, 1.0 / (1.0 + np.exp(-z)), strict=True):
            hit.answering = float(p)


def _questions_last(ordered: list[Hit]) -> list[Hit]:
    """The person's questions below every memory of what they stated, their scores lowered
    to match: what was asked is never what is known ("¿soy alérgico a algo?" must not answer
    "¿tengo alguna alergia?" over "Soy alérgico a los frutos secos")."""
    known = [h for h in ordered if h.facts.kind != "question"]
    asked = [h for h in ordered if h.facts.kind == "question"]
    if known and asked:
        floor = known[-1].fused
        for hit in asked:
            hit.fused = min(hit.fused, floor) - QUESTION_STEP
    return known + asked


def load(
    store: MemoryStore, hits: list[Hit], terms: list[str], *, hand_out: bool = False
) -> list[Hit]:
    """``hits`` with their records (those without one read from Chroma at once, and handed
    out with ``hand_out``) and the question's ``terms`` each holds; a memory archived since
    the search is left out."""
    wanted = [h.id for h in hits if h.loaded is None]
    by_id = {r.id: r for r in (store.hand_out if hand_out else store.records)(wanted)}
    out = []
    for hit in hits:
        hit.loaded = hit.loaded or by_id.get(hit.id)
        if hit.loaded is not None:
            hit.matched = matched_terms(terms, hit.loaded.content)
            out.append(hit)
    return out


#: Query embeddings run here while the caller does what needs no vector (the lexical search,
#: the principles): the embedder releases the GIL, so on an idle second core that work is
#: hidden behind it. Two workers: two searches at once need not queue for one thread.
_EMBEDDER = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memory-embed")


def embed_soon(store: MemoryStore, query: str) -> Future[Vectors]:
    """The query's vector, computed on the embedding thread."""
    return _EMBEDDER.submit(store.embedder.query, query)


def rank_features(hits: list[Hit], n_terms: int, k: float = WEIGHTS.k) -> npt.NDArray[np.float64]:
    """One row of ``RANK_FEATURES`` per candidate; ``hits`` by cosine, best first, ranks set."""
    if not hits:
        return np.zeros((0, len(RANK_FEATURES)))
    dim = next((len(h.vector) for h in hits if h.vector is not None and len(h.vector)), 1)
    vectors: npt.NDArray[np.float64] = np.vstack(
        [h.vector if h.vector is not None and len(h.vector) else np.zeros(dim) for h in hits]
    ).astype(np.float64)
    near = vectors[:HUB]
    top = min(HUB, len(hits))
    # Each candidate against the nearest ones, itself left out (it would add 1 to theirs).
    sums = (vectors @ near.T).sum(axis=1)
    sums[:top] -= np.einsum("ij,ij->i", near, near)
    others = np.full(len(hits), float(top))
    others[:top] -= 1
    centrality = sums / np.maximum(others, 1)
    rows = [
        [
            h.score,
            1.0 / (k + h.semantic_rank),
            1.0 / (k + h.lexical_rank) if h.lexical_rank else 0.0,
            len(h.matched) / n_terms if n_terms else 0.0,
            1.0 if h.facts.kind == "summary" else 0.0,
            float(c),
        ]
        for h, c in zip(hits, centrality, strict=True)
    ]
    return np.asarray(rows, dtype=np.float64)


def matched_terms(terms: list[str], content: str) -> list[str]:
    """The query stems that start a word of ``content`` (what the lexical side matched)."""
    return held_terms(terms, words(content))


def held_terms(terms: list[str], found: list[str]) -> list[str]:
    """The query stems that start one of the folded words ``found``."""
    whole = set(found)
    return [t for t in terms if t in whole or (len(t) >= 4 and any(w.startswith(t) for w in found))]


_YEAR = 365.0 * 86400  # seconds


def _metadata(f: RankFacts, query_keys: set[str], now_ts: float, w: RankWeights) -> float:
    score = w.importance * (f.importance - 3)
    if f.layer == "L1":
        score += w.distilled
    if f.names & query_keys:
        score += w.tag
    age_years = 1.0 if f.created_ts is None else max(0.0, (now_ts - f.created_ts) / _YEAR)
    score += w.recency * 0.5**age_years
    score += w.use * math.log2(1 + f.use_count)
    return float(score)

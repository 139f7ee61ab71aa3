"""When two texts are "the same mention", and what a repeat does to a memory.

A small embedder scores negations and swapped names as near-identical ("El disco estaba
montado" / "no estaba montado": 0.95; "Mi perro/gato se llama Max": 0.975), so cosine alone
would merge different facts. Two texts are near-identical when the cosine clears the
embedder's ``duplicate`` mark AND they carry the same numbers, the same negations, and at
least :data:`MIN_WORD_OVERLAP` of their content words (hashtags and stopwords aside) in common.
"""

from __future__ import annotations

from policies.text import tag_key, without_hashtags
from state.memory.models import MENTION_IDS_KEPT, MemoryRecord
from state.memory.normalize import NEGATIONS, content_words, numbers, words

#: Mentions (the first one included) at which a memory's importance rises by one.
BOOST_AT = 5
MIN_WORD_OVERLAP = 0.75


def same_claim(a: str, b: str) -> bool:
    """The lexical half of the test: numbers, negations and most words agree."""
    a, b = without_hashtags(a), without_hashtags(b)
    if numbers(a) != numbers(b):
        return False
    wa, wb = set(words(a)), set(words(b))
    if not wa or not wb or (wa & NEGATIONS) != (wb & NEGATIONS):
        return False
    # Overlap of content words: articles and prepositions would make any two sentences
    # of the same shape look alike ("Bueno/Roto texto de prueba sobre el día de hoy").
    ca, cb = content_words(a), content_words(b)
    if not ca or not cb:
        return wa == wb
    return len(ca & cb) / len(ca | cb) >= MIN_WORD_OVERLAP


def near_identical(a: str, b: str, cosine: float, threshold: float) -> bool:
    return cosine >= threshold and same_claim(a, b)


_LAYER_RANK = {"L0": 0, "L1": 1, "L-inf": 2}


def reinforce(target: MemoryRecord, incoming: MemoryRecord, mention_id: str) -> MemoryRecord:
    """``target`` after one more mention. At ``BOOST_AT`` mentions importance rises once
    (+1, at most 5): repeating a thing marks it as mattering, repeating it forever does not
    make it ever more important. A mention also adds its new tags, and lifts the memory to
    the higher layer of the two (a log paragraph the person then adds by hand becomes L1)."""
    out = target.model_copy(deep=True)
    out.use_count += 1
    out.mentions += 1
    out.mention_ids = [*out.mention_ids, mention_id][-MENTION_IDS_KEPT:]
    keys = {tag_key(t) for t in out.tags}
    out.tags = out.tags + [t for t in incoming.tags if tag_key(t) not in keys]
    if out.mentions >= BOOST_AT and not out.boosted:
        out.importance = min(5, out.importance + 1)
        out.boosted = True
    if _LAYER_RANK[incoming.layer] > _LAYER_RANK[out.layer]:
        out.layer = incoming.layer
        if incoming.memory_type in {"principle", "fact"}:
            out.memory_type = incoming.memory_type
    return out

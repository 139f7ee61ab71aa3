#!/usr/bin/env python3
"""Self-check of the held-out set F (copy of set B's check.py, thresholds adapted). System python only, no project imports.

Run: python3 tests/data/heldout_f/check.py   (exit code 0 = all checks hold)
"""
import collections
import datetime
import json
import os
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {"fact", "preference", "decision", "promise", "episode", "principle"}
ROLES = {"answer", "near", "far"}
LO, HI = datetime.date(2024, 12, 1), datetime.date(2026, 11, 27)
errors = []


def err(msg):
    errors.append(msg)


def load(name):
    rows = []
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                err(f"{name}:{n}: empty line")
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                err(f"{name}:{n}: bad JSON: {e}")
    return rows


def fold(s):
    s = unicodedata.normalize("NFKD", s.lower())
    return "".join(c for c in s if not unicodedata.combining(c))


def words(s):
    return re.findall(r"\w+", fold(s))


EN_WORDS = {"the", "my", "i", "is", "and", "a", "to", "of", "on", "at", "with",
            "it", "for", "we", "was", "did", "what", "how", "do", "which", "when"}
ES_WORDS = {"el", "la", "de", "que", "en", "y", "los", "las", "mi", "con", "por",
            "es", "un", "una", "se", "del", "al", "qué", "cuál", "cuándo", "cómo"}


def looks_english(s):
    ws = re.findall(r"\w+", s.lower())
    return sum(w in EN_WORDS for w in ws) > sum(w in ES_WORDS for w in ws)


mems = load("memories.jsonl")
qs = load("questions.jsonl")

# --- memories -------------------------------------------------------------
mem_by_id = {}
contents = set()
for m in mems:
    need = {"id", "content", "type", "date", "tags", "project", "role"}
    if set(m) != need:
        err(f"memory {m.get('id')}: fields {sorted(m)}")
        continue
    if not re.fullmatch(r"m-\d{3}", m["id"]):
        err(f"memory id format {m['id']}")
    if m["id"] in mem_by_id:
        err(f"duplicate memory id {m['id']}")
    mem_by_id[m["id"]] = m
    if m["content"] in contents:
        err(f"duplicate memory content {m['id']}")
    contents.add(m["content"])
    if m["type"] not in TYPES:
        err(f"{m['id']}: type {m['type']}")
    if m["role"] not in ROLES:
        err(f"{m['id']}: role {m['role']}")
    try:
        d = datetime.date.fromisoformat(m["date"])
        if not (LO <= d <= HI):
            err(f"{m['id']}: date {d} outside {LO}..{HI}")
    except (TypeError, ValueError):
        err(f"{m['id']}: date {m['date']!r}")
    if not (isinstance(m["tags"], list) and m["tags"] and all(isinstance(t, str) for t in m["tags"])):
        err(f"{m['id']}: tags")
    if m["project"] is not None and not isinstance(m["project"], str):
        err(f"{m['id']}: project")
    nw = len(m["content"].split())
    if not (4 <= nw <= 40):
        err(f"{m['id']}: {nw} words")

answers = [m for m in mems if m["role"] == "answer"]
nears = [m for m in mems if m["role"] == "near"]
fars = [m for m in mems if m["role"] == "far"]
# the first tag of an answer and of its near distractors is the subject slug
subj_of_answer = {}
for a in answers:
    slug = a["tags"][0]
    if slug in subj_of_answer.values():
        err(f"subject {slug} has two answers")
    subj_of_answer[a["id"]] = slug
near_count = collections.Counter(n["tags"][0] for n in nears)
for aid, slug in subj_of_answer.items():
    if near_count[slug] != 2:
        err(f"subject {slug}: {near_count[slug]} near distractors, want 2")
for slug in near_count:
    if slug not in subj_of_answer.values():
        err(f"near slug {slug} without answer")

# --- questions ------------------------------------------------------------
q_ids = set()
q_per_answer = collections.Counter()
qtexts = set()
for q in qs:
    need = {"id", "question", "lang", "kind", "answer_ids", "key", "trap"}
    if set(q) != need:
        err(f"question {q.get('id')}: fields {sorted(q)}")
        continue
    if not re.fullmatch(r"q-\d{3}", q["id"]):
        err(f"question id format {q['id']}")
    if q["id"] in q_ids:
        err(f"duplicate question id {q['id']}")
    q_ids.add(q["id"])
    if fold(q["question"]) in qtexts:
        err(f"{q['id']}: duplicate question text")
    qtexts.add(fold(q["question"]))
    if q["lang"] not in ("es", "en"):
        err(f"{q['id']}: lang")
    if not isinstance(q["trap"], bool):
        err(f"{q['id']}: trap not bool")
    if q["kind"] == "answered":
        if q["trap"]:
            err(f"{q['id']}: answered question marked trap")
        if not (isinstance(q["key"], list) and 1 <= len(q["key"]) <= 3):
            err(f"{q['id']}: key must have 1-3 items")
        if not q["answer_ids"]:
            err(f"{q['id']}: answered without answer_ids")
        qw = words(q["question"])
        qgrams = {tuple(qw[i:i + 4]) for i in range(len(qw) - 3)}
        for aid in q["answer_ids"]:
            m = mem_by_id.get(aid)
            if m is None:
                err(f"{q['id']}: answer id {aid} does not exist")
                continue
            if m["role"] != "answer":
                err(f"{q['id']}: {aid} is not an answer memory")
            q_per_answer[aid] += 1
            for k in q["key"]:
                if fold(k) not in fold(m["content"]):
                    err(f"{q['id']}: key {k!r} not in {aid}")
            mw = words(m["content"])
            mgrams = {tuple(mw[i:i + 4]) for i in range(len(mw) - 3)}
            common = qgrams & mgrams
            if common:
                err(f"{q['id']}: shares 4 consecutive words with {aid}: {sorted(common)}")
    elif q["kind"] == "unanswerable":
        if q["answer_ids"] or q["key"]:
            err(f"{q['id']}: unanswerable with answer_ids or key")
    else:
        err(f"{q['id']}: kind {q['kind']}")
for a in answers:
    if q_per_answer[a["id"]] != 2:
        err(f"answer {a['id']}: {q_per_answer[a['id']]} questions, want 2")

# --- counts ---------------------------------------------------------------
answered = [q for q in qs if q["kind"] == "answered"]
unans = [q for q in qs if q["kind"] == "unanswerable"]
traps = [q for q in unans if q["trap"]]
principles = [a for a in answers if a["type"] == "principle"]
en_mem = sum(looks_english(m["content"]) for m in mems)
en_q = sum(q["lang"] == "en" for q in qs)
if len(answers) < 80:
    err(f"only {len(answers)} subjects")
if len(fars) < 200:
    err(f"only {len(fars)} far distractors")
if len(unans) < 60:
    err(f"only {len(unans)} unanswerable questions")
if not (0.4 <= len(traps) / max(1, len(unans)) <= 0.6):
    err(f"traps {len(traps)} of {len(unans)} unanswerable: not about half")
if not (12 <= len(principles) <= 18):
    err(f"{len(principles)} principle answers, want about 15")
if not (0.20 <= en_mem / len(mems) <= 0.40):
    err(f"English memories {en_mem}/{len(mems)} not about 30%")
if not (0.10 <= en_q / len(qs) <= 0.40):
    err(f"English questions {en_q}/{len(qs)} out of range")

print(f"memories {len(mems)}: answer {len(answers)} (principles {len(principles)}), "
      f"near {len(nears)}, far {len(fars)}; english-looking {en_mem} ({en_mem / len(mems):.0%})")
print(f"questions {len(qs)}: answered {len(answered)}, unanswerable {len(unans)} "
      f"(traps {len(traps)}, absent {len(unans) - len(traps)}); lang en {en_q} ({en_q / len(qs):.0%})")
if errors:
    print(f"{len(errors)} problem(s):")
    for e in errors:
        print("  " + e)
    sys.exit(1)
print("OK")

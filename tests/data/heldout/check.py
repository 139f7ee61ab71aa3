#!/usr/bin/env python3
"""Sanity checks for the held-out set (system python3, no project imports)."""
import json, os, re, sys, unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))

def norm(s):
    s = unicodedata.normalize("NFKD", s.lower())
    return "".join(c for c in s if not unicodedata.combining(c))

def words(s):
    return re.findall(r"\w+", norm(s))

def grams(ws, n=4):
    return {tuple(ws[i:i + n]) for i in range(len(ws) - n + 1)}

def load(name):
    out = []
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            try:
                out.append(json.loads(line))
            except Exception as e:
                sys.exit("%s:%d does not parse: %s" % (name, ln, e))
    return out

errors = []
mems = load("memories.jsonl")
qs = load("questions.jsonl")
types = {"fact", "preference", "decision", "promise", "episode", "principle"}
mid = {}
for m in mems:
    if set(m) != {"id", "content", "type", "date", "tags", "project"}:
        errors.append("bad keys %s" % m.get("id"))
    if m["id"] in mid:
        errors.append("duplicate memory id %s" % m["id"])
    mid[m["id"]] = m
    if m["type"] not in types:
        errors.append("bad type %s" % m["id"])
    if not ("2024-11-28" <= m["date"] <= "2026-11-28") or not re.fullmatch(r"\d{4}-\d\d-\d\d", m["date"]):
        errors.append("bad date %s %s" % (m["id"], m["date"]))
    if not isinstance(m["tags"], list) or not (m["project"] is None or isinstance(m["project"], str)):
        errors.append("bad tags/project %s" % m["id"])
if len({m["content"] for m in mems}) != len(mems):
    errors.append("duplicate memory content")
qid = set()
answers = {}
for q in qs:
    if set(q) != {"id", "question", "lang", "kind", "answer_ids", "key"}:
        errors.append("bad keys %s" % q.get("id"))
    if q["id"] in qid:
        errors.append("duplicate question id %s" % q["id"])
    qid.add(q["id"])
    if q["lang"] not in ("es", "en") or q["kind"] not in ("answered", "unanswerable"):
        errors.append("bad lang/kind %s" % q["id"])
    if q["kind"] == "unanswerable":
        if q["answer_ids"] or q["key"]:
            errors.append("unanswerable with answers/key %s" % q["id"])
        continue
    if not q["answer_ids"] or not (1 <= len(q["key"]) <= 3):
        errors.append("answered without answer_ids or 1-3 keys %s" % q["id"])
    for a in q["answer_ids"]:
        if a not in mid:
            errors.append("%s: answer_id %s does not exist" % (q["id"], a))
            continue
        answers.setdefault(a, []).append(q)
        mem = mid[a]
        for k in q["key"]:
            if norm(k) not in norm(mem["content"]):
                errors.append("%s: key %r not in answer %s" % (q["id"], k, a))
        shared = grams(words(q["question"])) & grams(words(mem["content"]))
        if shared:
            errors.append("%s shares 4 consecutive words with %s: %s" % (q["id"], a, shared))
for a, ql in answers.items():
    if len(ql) != 2:
        errors.append("answer %s has %d questions" % (a, len(ql)))
    if norm(ql[0]["question"]) == norm(ql[-1]["question"]):
        errors.append("answer %s has identical questions" % a)
if len(qid) != len(qs):
    errors.append("question ids not unique")

n_ans = len(answers)
n_unans = sum(q["kind"] == "unanswerable" for q in qs)
n_princ = sum(mid[a]["type"] == "principle" for a in answers)
n_en_q = sum(q["lang"] == "en" for q in qs)
n_other = len(mems) - n_ans
print("memories %d | answer memories (subjects) %d, of which principles %d | other memories (near+far) %d"
      % (len(mems), n_ans, n_princ, n_other))
print("questions %d | answered %d | unanswerable %d | english %d (%.1f%%)"
      % (len(qs), len(qs) - n_unans, n_unans, n_en_q, 100.0 * n_en_q / len(qs)))
if n_ans < 80: errors.append("fewer than 80 subjects")
if n_other < 2 * n_ans + 150: errors.append("not enough distractors")
if n_unans < 50: errors.append("fewer than 50 unanswerable")
if not 12 <= n_princ <= 20: errors.append("principle count off: %d" % n_princ)
if errors:
    print("\n".join("ERROR " + e for e in errors))
    sys.exit(1)
print("OK")

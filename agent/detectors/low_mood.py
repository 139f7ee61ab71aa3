"""``low_mood``: more and more negative words in the person's own chat turns, over days.

Rule-based Spanish and some English: the text and the word list folded alike
(:func:`policies.text.loose_fold`: case and accents ignored, ñ read as n, so "desengañado" counts
typed either way). A word or phrase of :data:`_LEXICON` counts unless a negation ("no", "nunca",
"ni", "tampoco", "jamás", "not", "never", ...) stands among the three words before it ("no estoy
triste", "I'm not tired" do not count). A negation before a wish, a joy, sleep or one's worth
(:data:`_LOST`: "no tengo ganas", "nada me anima", "no he dormido", "I don't feel like") counts
as one, when the person says it of themselves and does not ask. Only the person's turns are
read, never ALMA's.

Each day of the last :data:`WINDOW_DAYS` with turns of the person gets a score: negative words
per turn. With at least :data:`MIN_DAYS` such days, the older half and the recent half are
compared: a finding when the recent mean is higher by :data:`MIN_RISE` or more and the recent
days hold at least :data:`MIN_WORDS` negative words. One bad day, or a mood that stays the same,
is not a trend. The words are gentle and never name a condition: ALMA only says what it read,
and suggests a pause. ``[monitor] low_mood = false`` in the policy turns it off.

One finding at most; its fingerprint is the ISO week of the newest day, so it comes at most once
a week.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from actions.planners.base import PlanResult, cap_evidence
from agent.detectors.logread import last_days, weekly_fingerprint
from policies.i18n import _
from policies.text import loose_fold
from state.chatlog import Paragraph

KIND = "low_mood"
WINDOW_DAYS = 7
MIN_DAYS = 3
MIN_RISE = 0.5
MIN_WORDS = 4

_LEXICON = (
    r"triste[sz]?|tristeza|agotad[oa]s?|cansad[oa]s?|cansancio|hart[oa]s?|ansiedad|ansios[oa]s?"
    r"|angustia(?:d[oa]s?)?|fatal|desanimad[oa]s?|frustrad[oa]s?|frustracion|agobiad[oa]s?"
    r"|agobio|estresad[oa]s?|estres|deprimid[oa]s?|sin ganas|no puedo mas"
    r"|solo[a]? en el mundo|fracaso|fracasad[oa]s?|desesperad[oa]s?|quemad[oa]s?|abrumad[oa]s?"
    r"|fatiga|insomnio|no duermo|odio mi|desengañad[oa]s?|engañad[oa]s?|muert[oa]s? de sueño"
    r"|llor(?:e|o|ar|ando|ado)|no se (?:que|lo que) me pasa|todo me (?:pesa|cuesta)"
    r"|me pesa todo|me siento (?:inutil|vaci[oa]|perdid[oa]|sol[oa])"
    # English, for a person who writes in it
    r"|tired|exhausted|worn out|drained|stressed|anxious|anxiety|overwhelmed|burn(?:ed|t) out"
    r"|miserable|depressed|hopeless|frustrated|fed up|insomnia|i hate my|cried|crying"
    r"|i'?m useless|i am useless|i feel (?:useless|worthless|empty)|what'?s the point"
)
_WORD = re.compile(rf"\b(?:{loose_fold(_LEXICON)})\b")
#: A mood told by what is lost: a wish, a joy, sleep, one's worth, after a negation in the same
#: clause ("no tengo ganas", "nada me anima", "ni el viernes me alegra", "no he dormido",
#: "no valgo para esto", "I don't feel like", "nothing cheers me up", "couldn't sleep"); not
#: when the clause wonders ("no sé si me apetece", "no sabes las ganas que tengo"), is about
#: someone else ("no le apetece", "they don't enjoy") or advises ("no olvides dormir").
_LOST = re.compile(
    r"(?<!\bthey )(?<!\bshe )(?<!\bhe )(?<!\byou )"
    r"\b(?:no|nada|ni|nadie|nunca|jamas|apenas|nothing|never|not|don't|didn't|can't|couldn't"
    r"|doesn't|won't)"
    r"(?: (?!(?:si|que|sabes|sabe|if|know|te|le|les|os|you|olvides|dejes)\b)[\w']+){0,3}? "
    r"(?:ganas|apetece|alegra|anima|ilusiona|motiva|disfruto|alivio|fuerzas|energia|valgo"
    r"|sirvo|dormido|dormir|dormi|pegue ojo|feel like|cheers? me up|enjoy\w*|motivated"
    r"|energy|sleep|slept|be bothered)\b"
)
_NEGATION = {"no", "nunca", "ni", "tampoco", "jamas", "not", "never", "nor", "don", "didn", "isn"}
_TOKEN = re.compile(r"[a-z]+")


def _asked(folded: str, start: int, end: int) -> bool:
    """Whether the sentence holding ``folded[start:end]`` is a question ("¿no te apetece?")."""
    opened = max(folded.rfind(c, 0, start) for c in ".!?\n¿")
    closes = [i for i in (folded.find(c, end) for c in ".!?\n") if i >= 0]
    return (opened >= 0 and folded[opened] == "¿") or (bool(closes) and folded[min(closes)] == "?")


def negative_words(text: str) -> list[str]:
    """The negative words of ``text`` that are not negated, and the losses a negation tells."""
    folded = loose_fold(text).replace("’", "'")
    out = [m.group(0) for m in _LOST.finditer(folded) if not _asked(folded, m.start(), m.end())]
    for m in _WORD.finditer(folded):
        if m.group(0).startswith("no ") or m.group(0) == "sin ganas":
            out.append(m.group(0))
            continue
        before = _TOKEN.findall(folded[: m.start()])[-3:]
        if _NEGATION & set(before):
            continue
        out.append(m.group(0))
    return out


def day_score(paragraphs: Sequence[Paragraph]) -> tuple[float, int] | None:
    """A day's mood measure: the person's negative words per turn of theirs, and how many
    words; None when the person wrote no turn that day (the detector's, the panel's plot)."""
    turns = [p for p in paragraphs if p.by_person and p.kind == "turn"]
    if not turns:
        return None
    words = sum(len(negative_words(p.text)) for p in turns)
    return words / len({p.turn for p in turns}), words


def detect_low_mood(
    days: Sequence[tuple[date, str, list[Paragraph]]], now: float
) -> PlanResult | None:
    """``days``: (day, log path, parsed paragraphs) for each chat log, any order."""
    since, today = last_days(now, WINDOW_DAYS)
    scores: list[tuple[date, float, int]] = []
    evidence: list[str] = []
    for day, path, paragraphs in sorted(days, key=lambda d: d[0]):
        if not since <= day <= today:
            continue
        score = day_score(paragraphs)
        if score is None:
            continue
        for p in paragraphs:
            if p.by_person and p.kind == "turn" and negative_words(p.text):
                shown = p.text if len(p.text) <= 120 else p.text[:119] + "…"
                evidence.append(f"{path}:{p.line}: «{shown}»")
        scores.append((day, *score))
    if len(scores) < MIN_DAYS:
        return None
    half = len(scores) // 2
    older, recent = scores[:half], scores[half:]
    older_mean = sum(s for _day, s, _words in older) / len(older)
    recent_mean = sum(s for _day, s, _words in recent) / len(recent)
    recent_words = sum(w for _day, _score, w in recent)
    if recent_mean - older_mean < MIN_RISE or recent_words < MIN_WORDS:
        return None
    newest = scores[-1][0]
    return PlanResult(
        kind=KIND,
        target="logs",
        title=_("These days your messages sound more tired"),
        reason=_(
            "Your messages of the last days hold more and more words like “exhausted”, "
            "“sad” or “fed up”. It is only what I read; if it helps, a break or talking "
            "with someone you trust can help."
        ),
        evidence=cap_evidence(evidence[-10:]),
        plan=[],
        files=0,
        fingerprint=weekly_fingerprint(KIND, newest),
    )

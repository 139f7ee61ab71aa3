"""The memory's words in Spanish: tokens, stopwords, negations, stems and search terms.

Every word is compared through :func:`policies.text.fold` (case and accents ignored, the tilde
of ñ kept), the same key tags and projects are matched on (:func:`policies.text.tag_key`).
"""

from __future__ import annotations

import re
import unicodedata

import snowballstemmer

from policies.text import fold

_WORD = re.compile(r"[^\W_]+(?:[.,'][^\W_]+)*", re.UNICODE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")

#: Words too common to tell two sentences apart (lexical overlap, near-duplicates).
STOPWORDS = frozenset(
    [
        "a",
        "al",
        "algo",
        "ante",
        "con",
        "contra",
        "de",
        "del",
        "desde",
        "e",
        "el",
        "ella",
        "ello",
        "en",
        "entre",
        "era",
        "es",
        "esa",
        "ese",
        "eso",
        "esta",
        "este",
        "esto",
        "estoy",
        "estaba",
        "fue",
        "ha",
        "han",
        "hasta",
        "hay",
        "he",
        "la",
        "las",
        "le",
        "les",
        "lo",
        "los",
        "me",
        "mi",
        "mis",
        "muy",
        "nos",
        "o",
        "os",
        "para",
        "pero",
        "por",
        "que",
        "qué",
        "se",
        "si",
        "sí",
        "sin",
        "sobre",
        "su",
        "sus",
        "te",
        "tu",
        "tus",
        "un",
        "una",
        "uno",
        "unos",
        "unas",
        "y",
        "ya",
        "yo",
        "the",
        "of",
        "to",
        "and",
        "is",
        "in",
        "it",
    ]
)
#: Words that flip a sentence's meaning: two texts that differ in them are never duplicates.
NEGATIONS = frozenset(
    {"no", "nunca", "jamas", "ni", "tampoco", "nada", "nadie", "ningun", "ninguna"}
)


def words(text: str) -> list[str]:
    """Folded word tokens (numbers kept whole: ``"2%"`` -> ``"2"``, ``"4.5"`` -> ``"4.5"``)."""
    return _WORD.findall(fold(text))


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS}


def numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(text))


def approx_tokens(text: str) -> int:
    """Token estimate for budgets: ~4 characters a token, the usual rule for Latin scripts."""
    return (len(text) + 3) // 4


_SNOWBALL_STOP = """
de la que el en y a los del se las por un para con no una su al lo como más pero sus le ya o
este sí porque esta entre cuando muy sin sobre también me hasta hay donde quien desde todo
nos durante todos uno les ni contra otros ese eso ante ellos e esto mí antes algunos qué unos
yo otro otras otra él tanto esa estos mucho quienes nada muchos cual poco ella estar estas
algunas algo nosotros mi mis tú te ti tu tus ellas nosotras vosotros vosotras os mío mía míos
mías tuyo tuya tuyos tuyas suyo suya suyos suyas nuestro nuestra nuestros nuestras vuestro
vuestra vuestros vuestras esos esas estoy estás está estamos estáis están esté estés estemos
estéis estén estaré estarás estará estaremos estaréis estarán estaría estarías estaríamos
estaríais estarían estaba estabas estábamos estabais estaban estuve estuviste estuvo estuvimos
estuvisteis estuvieron estuviera estuvieras estuviéramos estuvierais estuvieran estuviese
estuvieses estuviésemos estuvieseis estuviesen estando estado estada estados estadas estad he
has ha hemos habéis han haya hayas hayamos hayáis hayan habré habrás habrá habremos habréis
habrán habría habrías habríamos habríais habrían había habías habíamos habíais habían hube
hubiste hubo hubimos hubisteis hubieron hubiera hubieras hubiéramos hubierais hubieran hubiese
hubieses hubiésemos hubieseis hubiesen habiendo habido habida habidos habidas soy eres es somos
sois son sea seas seamos seáis sean seré serás será seremos seréis serán sería serías
seríamos seríais serían era eras éramos erais eran fui fuiste fue fuimos fuisteis fueron fuera
fueras fuéramos fuerais fueran fuese fueses fuésemos fueseis fuesen siendo sido tengo tienes
tiene tenemos tenéis tienen tenga tengas tengamos tengáis tengan tendré tendrás tendrá
tendremos tendréis tendrán tendría tendrías tendríamos tendríais tendrían tenía tenías
teníamos teníais tenían tuve tuviste tuvo tuvimos tuvisteis tuvieron tuviera tuvieras
tuviéramos tuvierais tuvieran tuviese tuvieses tuviésemos tuvieseis tuviesen teniendo tenido
tenida tenidos tenidas tened
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
her hers herself it its itself they them their theirs themselves what which who whom this that
these those am is are was were be been being have has had having do does did doing a an the
and but if or because as until while of at by for with about against between into through
during before after above below to from up down in out on off over under again further then
once here there when where why how all any both each few more most other some such no nor not
only own same so than too very s t can will just don should now
"""

#: Words of a question that say nothing about what is asked for: kept out of the lexical
#: query so "¿qué me dijo el médico?" looks for "medico", not for "dijo".
QUERY_STOPWORDS = STOPWORDS | frozenset(
    [
        "como",
        "cual",
        "cuales",
        "cuando",
        "cuanto",
        "cuanta",
        "cuantos",
        "cuantas",
        "donde",
        "quien",
        "quienes",
        "porque",
        "puedo",
        "tengo",
        "tiene",
        "tenemos",
        "hay",
        "hace",
        "hacer",
        "hago",
        "debo",
        "dijo",
        "dijeron",
        "pasa",
        "paso",
        "ahora",
        "algo",
        "alguna",
        "alguno",
        "ando",
        "aun",
        "cada",
        "este",
        "esta",
        "estas",
        "estos",
        "mas",
        "menos",
        "mucho",
        "otra",
        "otro",
        "acuerdas",
        "recuerdas",
        "sabes",
        "sobre",
        "todo",
        "todavia",
        "tanto",
        "tan",
        "vez",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "how",
        "did",
        "does",
        "do",
        "my",
        "me",
        "i",
        "you",
        "your",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "can",
        "should",
    ]
    # Snowball's Spanish and English stop lists: "antes", "no", "tuvimos" matched
    # look-alikes ("etiquetar los discos antes de tirarlos") on nothing but a function word.
    + [fold(w) for w in _SNOWBALL_STOP.split()]
)
_VERB_ENDINGS = (
    "iendo", "ando", "aron", "ieron", "aban", "amos", "emos", "imos",
    "ado", "ido", "ada", "ida", "an", "en",
)  # fmt: skip


_SPANISH = snowballstemmer.stemmer("spanish")


def stem(word: str) -> str:
    """A Spanish stem, for a prefix match: Snowball's ("cumplió" and "cumpleaños", "práctico"
    and "practicando" meet), or when it would leave under four letters ("batería" -> "bat") or
    finds no Spanish ending ("costs"), a light one: a verb ending, a plural and the final vowel
    off ("fallan", "falla", "fallo").
    Words under five letters stay whole (names, numbers), and a stem keeps at least four."""
    if len(word) < 5 or not word.isalpha():
        return word
    snow = str(_SPANISH.stemWord(word))
    if len(snow) >= 4 and snow != word:
        return snow
    for group in (_VERB_ENDINGS, ("es", "s"), ("a", "o", "e")):
        for suffix in group:
            if word.endswith(suffix) and len(word) - len(suffix) >= 4:
                word = word[: -len(suffix)]
                break
    return word


def search_terms(text: str) -> list[str]:
    """The stems a lexical search looks for, in order, without repeats."""
    out: dict[str, None] = {}
    # Stemmed as written, then folded: Snowball reads the accents ("cumplió" -> "cumpl").
    for written in _WORD.findall(unicodedata.normalize("NFC", text.casefold())):
        word = fold(written)
        if word not in QUERY_STOPWORDS and (len(word) > 1 or word.isdigit()):
            out.setdefault(fold(stem(written)), None)
    return list(out)


def lexical_text(content: str, *fields: str) -> str:
    """What the lexical index holds for a memory: its folded words and its metadata words."""
    return " ".join(words(" ".join((content, *fields))))

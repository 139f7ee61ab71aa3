"""Which measure tells a statement that says what its source says from one that does not:
lexical overlap of stems (what agent.voice.verify uses) or the packaged embedder's cosine.

``python -m tests.support.verify_tune`` prints, for each measure, the best accuracy a single
threshold reaches on the pairs below and that threshold. The pairs were written for this (none
from the held-out set): a source as the person stated it, and a sentence a model might write
about it, faithful (a paraphrase, a restatement in the second person) or not (a changed word,
name, relation or a negation: what a small model does to a fact).
"""

from __future__ import annotations

from agent.voice.verify import LEXICAL_MIN, Grounds, verify_text
from state.memory.embedder import get_embedder

#: (source, sentence, says what the source says)
PAIRS: list[tuple[str, str, bool]] = [
    ("Mi perro se llama Toby.", "Tu perro se llama Toby.", True),
    ("Mi perro se llama Toby.", "Tu gato se llama Toby.", False),
    ("Mi perro se llama Toby.", "Tu perro no se llama Toby.", False),
    ("Mi perro se llama Toby.", "Toby es el nombre de tu perro.", True),
    ("Soy alérgico a los frutos secos.", "Eres alérgico a los frutos secos.", True),
    ("Soy alérgico a los frutos secos.", "Eres alérgico al marisco.", False),
    ("Soy alérgico a los frutos secos.", "No eres alérgico a los frutos secos.", False),
    ("Mi hermana Lucía vive en Valencia.", "Tu hermana Lucía vive en Valencia.", True),
    ("Mi hermana Lucía vive en Valencia.", "Tu madre Lucía vive en Valencia.", False),
    ("Mi hermana Lucía vive en Valencia.", "Tu hermana Lucía trabaja en Valencia.", False),
    ("El backup se hace a las 3:15 en /mnt/respaldo.", "Tu copia se hace en /mnt/respaldo.", False),
    (
        "El backup se hace a las 3:15 en /mnt/respaldo.",
        "El backup se hace en /mnt/respaldo a las 3:15.",
        True,
    ),
    ("Decidí no renovar el gimnasio en enero.", "Decidiste no renovar el gimnasio.", True),
    ("Decidí no renovar el gimnasio en enero.", "Decidiste renovar el gimnasio.", False),
    ("Decidí no renovar el gimnasio en enero.", "Decidiste dejar la piscina.", False),
    ("Los lunes tengo reunión de equipo a las 9.", "Tienes reunión de equipo los lunes.", True),
    ("Los lunes tengo reunión de equipo a las 9.", "Tienes reunión con tu jefe los lunes.", False),
    ("Compré un candado en U para la bici nueva.", "Compraste un candado para la bici.", True),
    ("Compré un candado en U para la bici nueva.", "Compraste una bici nueva de carretera.", False),
    ("La ITV del coche caduca en marzo.", "La ITV de tu coche caduca en marzo.", True),
    ("La ITV del coche caduca en marzo.", "El seguro de tu coche caduca en marzo.", False),
    (
        "Nunca arriesgar más del 2% en una operación.",
        "No arriesgues más del 2% en una operación.",
        True,
    ),
    ("Nunca arriesgar más del 2% en una operación.", "Puedes arriesgar el 2% de la cuenta.", False),
    ("My sister Emma's birthday is on May 3.", "Your sister Emma's birthday is on May 3.", True),
    ("My sister Emma's birthday is on May 3.", "Your brother Emma's birthday is on May 3.", False),
    ("My sister Emma's birthday is on May 3.", "Emma was born in Boston.", False),
    ("Cené con Marta en el japonés del centro.", "Cenaste con Marta en el japonés.", True),
    ("Cené con Marta en el japonés del centro.", "Comiste con Marta en un italiano.", False),
    (
        "El servidor de casa es una Raspberry Pi 4.",
        "Tu servidor de casa es una Raspberry Pi 4.",
        True,
    ),
    ("El servidor de casa es una Raspberry Pi 4.", "Tu portátil es una Raspberry Pi 4.", False),
]


def lexical(source: str, sentence: str) -> bool:
    """Whether agent.voice.verify shows ``sentence`` with ``source`` the one thing given."""
    return not verify_text(sentence, Grounds(sources=(source,))).dropped


def main() -> None:
    emb = get_embedder("e5-small")
    labels = [label for _s, _t, label in PAIRS]
    lex = [lexical(s, t) for s, t, _label in PAIRS]
    lex_right = sum(a == b for a, b in zip(lex, labels, strict=True))
    cosines = []
    for source, sentence, _label in PAIRS:
        a = emb.passages([source])[0]
        b = emb.passages([sentence])[0]
        cosines.append(float(a @ b))
    best = (0, 0.0)
    for threshold in sorted(set(cosines)):
        right = sum((c >= threshold) == label for c, label in zip(cosines, labels, strict=True))
        best = max(best, (right, threshold))
    print(f"{len(PAIRS)} pairs, {sum(labels)} faithful")
    print(
        f"lexical overlap of stems (at least {LEXICAL_MIN}, same negation): {lex_right}/{len(PAIRS)}"
    )
    print(f"embedder cosine, best single threshold ({best[1]:.3f}): {best[0]}/{len(PAIRS)}")
    faithful = [c for c, label in zip(cosines, labels, strict=True) if label]
    unfaithful = [c for c, label in zip(cosines, labels, strict=True) if not label]
    print(
        f"cosines: faithful {min(faithful):.3f}-{max(faithful):.3f}, "
        f"not faithful {min(unfaithful):.3f}-{max(unfaithful):.3f}"
    )
    for (source, sentence, label), ok, cos in zip(PAIRS, lex, cosines, strict=True):
        if ok != label:
            print(f"  lexical wrong: {sentence!r} against {source!r} (cosine {cos:.3f})")


if __name__ == "__main__":
    main()

"""A promise kept in words no rule lists, read by meaning (:mod:`agent.detectors.meaning`).

A later line of the person's keeps a promise when it is about the same thing (the cosine of
the two lines' vectors at least :data:`SAME_THING`) and reads as a task done, handed over,
under way or settled another way (the reader fitted on :data:`KEPT` against :data:`NOT_KEPT`,
from a score of :data:`THRESHOLD`): "ya están en el Drive" for "te mando las páginas el jueves",
"went through the branch and approved it" for "I'll review the PR". The examples are written
for ALMA in both languages, on other people's tasks than any week's; what is not kept is as
varied as what is: not yet done, put off, forgotten, asked about, promised again, someone
else's reminder.

Without the embedder no line is read so, and the exact rules of :mod:`agent.detectors.pending`
still close what they close.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent.detectors.meaning import Reader, others, vectors

#: From this cosine a later line is about the promise's thing.
SAME_THING = 0.88
#: From this score a line reads as a task done or settled.
THRESHOLD = 0.3

KEPT = (
    # done and handed over
    "Ya está enviado el presupuesto al cliente.",
    "Le he pasado las notas a la directora esta mañana.",
    "Subidas las fotos a la carpeta compartida.",
    "Las facturas ya están en la gestoría.",
    "El informe salió ayer por correo.",
    "Devueltos los libros a la biblioteca, por fin.",
    "Entregué el trabajo antes de la hora.",
    "Pagado el recibo de la luz.",
    "Ya tiene Laura las llaves del piso.",
    "Los planos están en la bandeja de entrada de la constructora.",
    "Firmado el contrato y escaneado.",
    "He llevado el coche al taller a primera hora.",
    "Mandé los vídeos editados a la agencia.",
    "La memoria está colgada en el campus virtual.",
    # settled another way
    "Lo del seguro quedó resuelto por teléfono.",
    "Reunión con el banco hecha, todo aclarado.",
    "Al final no hice la tarta, compré unas pastas y apañado.",
    "La presentación del proyecto salió adelante en el claustro.",
    "He hablado con el fontanero y viene el martes.",
    "Revisado el contrato con la abogada, todo en orden.",
    # under way
    "Empecé con la memoria, llevo dos apartados.",
    "Ya estoy con las correcciones del capítulo tres.",
    # English
    "Sent the quote to the client this morning.",
    "The slides are with Tom now.",
    "Handed in the report before lunch.",
    "Looked over Ana's pull request and merged it.",
    "Called the plumber, he's coming Tuesday.",
    "The invoices are in the shared folder now.",
    "Booked the table for Friday.",
    "Fixed the printer, it was a loose cable.",
    "Couldn't make the cake in the end, picked up cookies on the way and that did it.",
    "Started the literature review, two sections in.",
    "The form went off by post yesterday.",
    "Paid the electricity bill.",
    "Dropped the parcel at the post office on my way in.",
    "Presented the budget at the meeting, it went through.",
    "Checked the lease with the agent, all sorted.",
    "The draft is in her inbox.",
    "Had a look at the new logo and gave my comments.",
    "Talked to the landlord about the boiler, done.",
)

NOT_KEPT = (
    # not yet, put off, forgotten
    "Todavía no he enviado el presupuesto.",
    "El informe sigue sin hacer.",
    "No he tenido tiempo de llamar al fontanero.",
    "Ni he abierto el contrato.",
    "Se me ha olvidado pagar el recibo.",
    "La impresora sigue atascada.",
    "Tengo el borrador a medias y no sé cuándo lo acabaré.",
    "Lo de la memoria me agobia, no avanzo nada.",
    "Hoy tampoco he podido con las facturas.",
    "He dejado lo de los planos para la semana que viene.",
    # promised again, planned, asked
    "Mañana le paso las notas a la directora.",
    "Tengo que devolver los libros esta semana.",
    "Esta tarde intento acabar la presentación.",
    "¿Te acuerdas de lo del seguro?",
    "¿Cuándo era la entrega del trabajo?",
    # someone else asks or does
    "Me han vuelto a pedir las facturas.",
    "El banco ha llamado otra vez por lo del préstamo.",
    "Laura me ha preguntado por las llaves.",
    # only a mention: an ordinary line of the day about the same people or things
    "Hoy he pensado mucho en el proyecto.",
    "Qué pereza me da lo del coche.",
    "A primera hora clase con los de 2ºA.",
    "Hoy reunión con la gestoría a las diez.",
    "Buenos días, lunes de lluvia.",
    "Comida con mi hermana en el centro.",
    "La directora ha pasado por clase.",
    "Mañana más.",
    "Salgo a las ocho para el aeropuerto.",
    "Gracias, ya me apaño yo.",
    # English
    "Still haven't sent the quote.",
    "I'll hand in the report tomorrow.",
    "Didn't get to the slides today.",
    "The plumber hasn't called back.",
    "Need to book the table for Friday.",
    "Haven't opened the contract yet.",
    "Tom asked about the slides again.",
    "Forgot to pay the electricity bill.",
    "The printer is still jammed.",
    "Is the form due this week?",
    "Ignored the email about the report.",
    "The review is still sitting in my inbox.",
    "I keep putting off the literature review.",
    "Meant to call the bank but ran out of time.",
    "Didn't even look at the draft.",
    "Pushed the budget to next week.",
    "Got another reminder about the invoice.",
    "The landlord texted about the boiler again.",
    "Thinking about the cake for the party.",
    "First thing, a call with the Berlin team.",
    "Morning at the lab, then the seminar.",
    "Lunch with Ana near the office.",
    "Quiet day, nothing special.",
    "Thanks, I'll manage.",
    "Off to the airport at eight.",
    "Will try to finish the edits tonight.",
)

READER = Reader(KEPT, NOT_KEPT)


def kept_by(promise: str, later: Sequence[str]) -> bool:
    """Whether one of ``later`` (the person's lines or turns after ``promise`` that share one
    of its keywords: the cosine alone finds two ordinary lines of one person alike) keeps it
    by meaning. ``promise`` is the promise with what it is about (the sentence before a
    pronoun's promise). A question or a line that opens on another person keeps nothing."""
    candidates = [t for t in later if not t.strip().endswith("?") and not others(t)]
    if not candidates:
        return False
    rows = vectors([promise, *candidates])
    if rows is None:
        return False
    near = [t for k, t in enumerate(candidates) if float(rows[0] @ rows[k + 1]) >= SAME_THING]
    scores = READER.scores(near) if near else []
    return scores is not None and any(score >= THRESHOLD for score in scores)

"""A manual task the person tells in the chat, read by meaning: which of their lines tell
that they moved files by hand (copied, dragged, passed, put them somewhere), and which of
those tell the same task on other days.

No word list decides it: each line is embedded by the packaged embedder the memory uses
(``state.memory.sentences``: multilingual-e5-small through ``get_embedder``, in this process,
loaded once whoever asks first; each line embedded once) and compared with two small sets of
sentences written for ALMA, in Spanish and English: lines that tell such a task (:data:`TOLD`) and lines of an ordinary working day
that do not (:data:`NOT_TOLD`: exporting, sending, backing up, tidying, promising). A line
tells a task when its nearest examples are told ones by :data:`MARGIN`. What is exact stays
exact: the folder a line is about is a folder of the tree it names
(:func:`agent.detectors.routine` matches the names), never a guess.

When the embedder cannot load (a damaged install), no line is read as told: the routine from
files still stands on its own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)

#: The embedder, by the memory's default name: a routine is read with the same model.
EMBEDDER = "e5-small"
#: The nearest examples of each side a line is compared with (their mean cosine).
NEAREST = 3
#: How much nearer the told examples must be than the others for a line to tell a task.
#: Fitted on the fit weeks and synthetic ones (docs/agent.md, `routine`).
MARGIN = 0.02
#: Two told lines of different days tell the same task from this cosine (when neither names
#: a folder of the tree that decides it).
SAME_TASK = 0.9

# Sentences written for ALMA, never taken from a test set: what telling a by-hand file move
# sounds like, and what a working day says otherwise.
TOLD = (
    "Otra vez he copiado a mano los archivos de hoy a la carpeta de entregas.",
    "He pasado a mano lo exportado a su carpeta con la fecha.",
    "Como cada día, muevo yo los ficheros del proyecto a la carpeta del cliente.",
    "He arrastrado los archivos de hoy hasta la carpeta compartida, a mano.",
    "Creo la carpeta con la fecha de hoy y meto dentro lo que he sacado.",
    "Ya he puesto los PDF de hoy en su carpeta, como siempre, a mano.",
    "Copiando otra vez los informes a la carpeta de la fecha, qué pereza.",
    "Pasé los archivos del día a la carpeta de envíos, igual que ayer.",
    "He vuelto a mover a mano las facturas de hoy a su carpeta.",
    "Subí a mano los documentos del día a la carpeta del equipo.",
    "Ahorita pasé los archivos de hoy a la carpeta de entregas, como diario.",
    "Lo exporto y luego lo copio yo a la carpeta de hoy dentro de entregas.",
    "Again I copied today's files by hand into the delivery folder.",
    "Moved the exported files over to the dated folder myself, as every day.",
    "Dragged today's export into the shared folder by hand again.",
    "I made today's folder and put the files in it manually, same as yesterday.",
    "Copied the day's reports into their folder by hand once more.",
    "Manually moved the CSV from the project folder into the reports folder.",
    "Same as every morning: I copy the output files across to the client folder.",
    "Put the new exports into today's folder under deliveries myself.",
    "Dejé yo los escaneos de hoy en la carpeta del gestor, otra vez a mano.",
    "Los vuelvo a pegar en la carpeta de la fecha, cada día lo mismo.",
    "Uploaded the day's spreadsheets to the team folder by hand, as usual.",
)
NOT_TOLD = (
    "He exportado las fotos de la boda y he mandado el enlace a los novios.",
    "La copia de seguridad ha fallado otra vez esta noche.",
    "Mañana tengo que llamar a la imprenta para el pedido.",
    "Estoy cansada, ha sido un día muy largo.",
    "He ordenado la carpeta de descargas por fin.",
    "Reunión con el cliente a las diez, luego a revisar el presupuesto.",
    "He guardado la factura del proveedor en su carpeta.",
    "Terminé de corregir los exámenes de la tarde.",
    "Buenos días, hoy empiezo pronto con el proyecto.",
    "El script de sincronización no conecta con el servidor.",
    "He actualizado la hoja de cálculo con las ventas del mes.",
    "Le mandé el informe a Pedro por correo.",
    "Cierro por hoy, mañana más.",
    "Hoy no he hecho nada de provecho, sin ganas.",
    "Exported the video and sent the link to the client.",
    "The nightly backup failed again with the same error.",
    "I'll call the bank tomorrow about the card.",
    "Long day, I'm off to bed.",
    "Finally tidied up my downloads folder.",
    "Reviewed the pull request and left a few comments.",
    "Saved the invoice in the accounts folder.",
    "Meeting with the team at ten, then writing the report.",
    "The tests keep failing on the build server.",
    "Good morning, starting early on the project today.",
    "Hoy tengo la entrega del proyecto y estoy agotado.",
    "Deadline for the delivery is Friday, I'm stressed.",
    "He copiado a mi compañera en el correo.",
    "Hice la copia de seguridad del portátil en el disco externo.",
)

_EXAMPLES: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None = None
#: Not empty once the embedder failed: said once in the log, not at every analysis.
_FAILED: list[bool] = []


def vectors(texts: Sequence[str]) -> npt.NDArray[np.float32] | None:
    """The lines' vectors (one row each, normalized), or None when the embedder is not there."""
    try:
        from state.memory.sentences import sentence_vectors  # numpy and the model: late

        return sentence_vectors(texts, EMBEDDER)
    except Exception:  # the embedder missing or broken: the words are not read, files still are
        if not _FAILED:
            log.exception("routine: the embedder did not load; the chat's words are not read")
            _FAILED.append(True)
        return None


def _examples() -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None:
    global _EXAMPLES
    if _EXAMPLES is None:
        told, other = vectors(TOLD), vectors(NOT_TOLD)
        if told is None or other is None:
            return None
        _EXAMPLES = (told, other)
    return _EXAMPLES


def scores(texts: Sequence[str]) -> list[float] | None:
    """Each line's lead of its nearest told examples over its nearest others (cosines)."""
    import numpy as np

    if not texts:
        return []
    examples = _examples()
    lines = vectors(texts)
    if examples is None or lines is None:
        return None
    told, other = examples

    def nearest(sims: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        k = min(NEAREST, sims.shape[1])
        top: npt.NDArray[np.float32] = -np.sort(-sims, axis=1)[:, :k]
        return np.asarray(top.mean(axis=1), dtype=np.float32)

    lead = nearest(lines @ told.T) - nearest(lines @ other.T)
    return [float(x) for x in lead]


def similarity(a: str, b: str) -> float:
    rows = vectors([a, b])
    return 0.0 if rows is None else float(rows[0] @ rows[1])

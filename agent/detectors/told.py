"""A manual task the person tells in the chat, read by meaning: which of their lines tell that
they did, by hand and once more, a task a computer could do (copied or moved files to a folder,
typed data from one thing into another, exported and uploaded, renamed files one by one, sent
the same report by hand, filled the same form), and which of those tell the same task on other
days.

No word list decides it: each line is read by :mod:`agent.detectors.meaning` (the packaged
embedder and a linear reader fitted on two sets of sentences written for ALMA, in Spanish and
English): lines that tell such a task (:data:`TOLD`, by families of manual tasks) and lines that
do not (:data:`NOT_TOLD`: an ordinary working day, a task done once, someone else's chore, a
plan, a question, a habit that is no task at a computer). A line tells a task from a score of
:data:`THRESHOLD`. What is exact stays exact: the folder or file a line is about is one of the
tree it names (:mod:`agent.detectors.routine` matches the names), never a guess.

When the embedder cannot load (a damaged install), no line is read as told: the routine from
files still stands on its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent.detectors.meaning import Reader, others, similarity

__all__ = [
    "COPIED",
    "NOT_TOLD",
    "OTHER_TASKS",
    "SAME_TASK",
    "THRESHOLD",
    "TOLD",
    "copies",
    "others",
    "scores",
    "similarity",
]

#: From this score a line tells a manual task (the reader's scale: +1 is a told example's
#: side, -1 the other's). Chosen on the fit weeks, the development weeks and sentences of our
#: own (docs/agent.md, `routine`).
THRESHOLD = 0.0
#: Two told lines of different days tell the same task from this cosine (when no folder or
#: file of the tree they name decides it).
SAME_TASK = 0.86

# Sentences written for ALMA, never taken from a test set.
#: Files copied or moved by hand into a folder: the task a copy script does.
COPIED = (
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
    "Dejé yo los escaneos de hoy en la carpeta del gestor, otra vez a mano.",
    "Los vuelvo a pegar en la carpeta de la fecha, cada día lo mismo.",
    "Again I copied today's files by hand into the delivery folder.",
    "Moved the exported files over to the dated folder myself, as every day.",
    "Dragged today's export into the shared folder by hand again.",
    "I made today's folder and put the files in it manually, same as yesterday.",
    "Copied the day's reports into their folder by hand once more.",
    "Manually moved the CSV from the project folder into the reports folder.",
    "Same as every morning: I copy the output files across to the client folder.",
    "Put the new exports into today's folder under deliveries myself.",
    "Uploaded the day's spreadsheets to the team folder by hand, as usual.",
    "He vuelto a copiar yo el CSV de ventas del día a la carpeta de informes.",
    "Otra vez a mano: el Excel de cierre, copiado a su carpeta del día.",
    "Copied the day's CSV export into the finance folder by hand again.",
    "Dropped today's spreadsheet into the reports folder myself, like every day.",
    "Otra vez bajando los extractos del banco y subiéndolos a la carpeta de la gestoría.",
)
#: Other manual tasks, by family: a copy script would not do them.
OTHER_TASKS = (
    # data typed or pasted from one thing into another
    "De nuevo metiendo a mano los pedidos del correo en la hoja de cálculo.",
    "He vuelto a teclear los datos de los albaranes en el Excel, uno detrás de otro.",
    "Todos los días paso yo los importes de las facturas a la tabla de gastos.",
    "Otra vez copiando las cifras del informe a la hoja de control, fila a fila.",
    "Copio y pego los números del programa de caja a la hoja del mes, una vez más.",
    "Sigo pasando a mano las notas del cuaderno al documento del curso, a diario.",
    "Todas las mañanas relleno la hoja con las lecturas de los contadores, campo a campo.",
    "Vuelta a transcribir las citas de la agenda al calendario del despacho, a mano.",
    "Typed the day's orders into the spreadsheet by hand again.",
    "Another morning copying figures from the PDFs into the tracking sheet.",
    "As usual I entered the readings into the log sheet manually.",
    "Keyed the new invoices into the accounts spreadsheet myself, like every day.",
    "Once more pasting the numbers from the emails into the sheet, row after row.",
    "I keep transferring the clients' details from the forms into the database by hand.",
    "Cada día igual: abro el correo, copio los datos de cada pedido y los paso a la hoja.",
    "Llevo un rato volcando en la tabla lo que ha llegado por correo, como a diario.",
    "Ya he actualizado a mano la hoja de stock con lo vendido ayer, mi tarea de cada día.",
    "Me toca otra vez meter en la base de datos los resultados que llegan en PDF.",
    "Dedico cada mañana un buen rato a pasar los registros del programa viejo al nuevo.",
    "Yet again, logging the day's calls in the spreadsheet by hand.",
    "My daily chore is done: the new sign-ups copied from the inbox into the sheet.",
    "Updated the stock sheet by hand with yesterday's sales, as I do every day.",
    "Hoy también me ha tocado meter los albaranes en el programa de almacén.",
    "Today too I had to paste the bookings into the calendar sheet myself.",
    # exported, downloaded and uploaded by hand
    "He vuelto a exportar el informe y subirlo yo a la web del cliente.",
    "Cada tarde descargo el listado y lo subo a mano al portal.",
    "Exported the report and uploaded it to the portal by hand, same as yesterday.",
    "Downloaded the statements and uploaded them to the accountant's site again.",
    "Every evening I export the dashboard and upload it to the shared drive myself.",
    # files renamed one by one
    "He renombrado a mano otra vez los escaneos de hoy con la fecha y el cliente.",
    "Cambio yo los nombres de las fotos una a una antes de guardarlas, cada día igual.",
    "Renamed today's scans one at a time by hand again.",
    "Another afternoon renaming the photos manually before filing them.",
    "Tocó de nuevo renombrar las fotos del día, una tras otra.",
    "Renaming invoices again, my favourite part of every afternoon.",
    # the same report sent by hand
    "Otra vez he mandado a mano el parte del día a todo el equipo.",
    "Cada viernes adjunto yo el mismo informe y se lo envío a los jefes, de uno en uno.",
    "Sent the daily status report by hand to the whole list again.",
    "As every morning, I attached the sales sheet and emailed it to the managers myself.",
    # the same form filled, the same conversion done
    "Relleno de nuevo a mano el formulario de la web con los datos del día.",
    "Filled in the same web form by hand with today's numbers again.",
    "He vuelto a convertir a PDF los documentos del día, de uno en uno.",
    "Converted the day's documents to PDF one at a time, like every day.",
)
TOLD = COPIED + OTHER_TASKS
NOT_TOLD = (
    # an ordinary working day
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
    "Hoy tengo la entrega del proyecto y estoy agotado.",
    "He copiado a mi compañera en el correo.",
    "Hice la copia de seguridad del portátil en el disco externo.",
    "Ha venido el técnico a cambiar la caldera, ya funciona.",
    "Abro el portátil un momento solo para mirar la agenda de la semana.",
    "Por la tarde, papeleo y llamadas a los proveedores.",
    "Me han devuelto el contrato firmado, lo dejo en su carpeta.",
    "He presentado el escrito en el registro antes de que cerraran.",
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
    "Deadline for the delivery is Friday, I'm stressed.",
    "The plumber came round and fixed the boiler.",
    "Checked my calendar for the week, nothing urgent.",
    # a task done once
    "Por fin he pasado todas las fotos del viaje al disco duro, tarea hecha.",
    "Hoy he copiado los contactos del móvil viejo al nuevo.",
    "He metido en el Excel los gastos del viaje, ya está cerrado.",
    "He subido el vídeo del cumpleaños para que lo vea la familia.",
    "This once I moved the old project files to the archive by hand.",
    "Finally typed last year's receipts into the tax spreadsheet, done for good.",
    "Copied my old photos over to the new laptop, all done.",
    # someone else's chore
    "Mi compañera se pasa la mañana metiendo a mano los pedidos en el Excel.",
    "Mi jefe copia cada día los informes a la carpeta compartida.",
    "El becario renombra a mano las fotos de los clientes, pobre.",
    "Mi hijo sube todos los días los deberes a la plataforma del colegio.",
    "My colleague types the orders into the spreadsheet every morning.",
    "Our assistant uploads the reports to the portal by hand each week.",
    "My partner renames the scans every evening, very tidy of him.",
    # a plan, a question, a wish
    "¿Se podría hacer que las facturas se guarden solas en su carpeta?",
    "Tengo que preparar la hoja de cálculo del presupuesto para el lunes.",
    "Mañana meto los datos de la encuesta en el Excel.",
    "Can you remind me to update the spreadsheet tomorrow?",
    "Next week I need to upload the course materials.",
    # a habit that is no task at a computer
    "Como cada mañana, café y a la oficina.",
    "Otra vez reunión de equipo a las nueve, como todos los lunes.",
    "Hoy juicio a las diez, repaso las preguntas en el tren.",
    "Clases toda la mañana y tutorías por la tarde.",
    "Every morning I walk the dog before work.",
    "Same commute as always, the train was late again.",
)

READER = Reader(TOLD, NOT_TOLD)
#: Of the told lines, whether they copy files into a folder or do another task.
COPY_READER = Reader(COPIED, OTHER_TASKS)


def scores(texts: Sequence[str]) -> list[float] | None:
    """Each line's score of telling a manual task (from :data:`THRESHOLD`: it does), or None
    when the embedder is not there."""
    return READER.scores(texts)


def copies(texts: Sequence[str]) -> bool:
    """Whether told lines, together, tell copying files into a folder rather than another task
    (their mean score on the copy side; True without the embedder, as the words' folder said)."""
    found = COPY_READER.scores(texts)
    return not found or sum(found) / len(found) >= 0.0

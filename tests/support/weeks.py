"""Weeks lived with ALMA: roots of different people, bad weeks and calm ones, dated from today.

Each :class:`Week` writes a root's logs and files as the seven days before the day the test
runs (today included), and names what a person living that week would expect ALMA to notice
(``expected``: kind and, for a folder's finding, its target). A calm week expects nothing: at
most one suggestion is what a person tolerates from a tool that stays quiet when all is well.

The texts are written for these scenarios, never taken from a detector's own tests, and the
labels say what happened in the week, not what a detector is known to catch.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

#: A turn of a day's chat log: (HH:MM, who, text); who is "usuario" or "alma".
Turn = tuple[str, str, str]


@dataclass
class Week:
    name: str
    language: str
    bad: bool
    #: (kind, target or None): what the week should bring up
    expected: list[tuple[str, str | None]]
    build: Callable[[Path, date], None] = field(repr=False)


def days_of(today: date) -> list[date]:
    return [today - timedelta(days=n) for n in range(6, -1, -1)]


def stamp(day: date, hour: int = 12) -> float:
    return time.mktime(datetime(day.year, day.month, day.day, hour).timetuple())


def write(root: Path, rel: str, data: bytes | str, *, when: float | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    if when is not None:
        os.utime(path, (when, when))
    return path


def chat_day(root: Path, day: date, turns: list[Turn]) -> None:
    blocks = [f"# {day.isoformat()}\n"]
    for hm, who, text in turns:
        blocks.append(f"## {hm}:00 · {who}\n{text}\n")
    write(root, f"logs/{day.isoformat()}.md", "\n".join(blocks), when=stamp(day, 23))


def loose_files(root: Path, folder: str, names: list[str], day: date) -> None:
    for i, name in enumerate(names):
        write(root, f"{folder}/{name}", f"{folder}/{name} {i}\n" * (1 + i % 5), when=stamp(day))


def same_bytes(root: Path, rels: list[str], data: bytes, when: float) -> None:
    """Copies with their times kept (``cp -p``, a phone sync): the same bytes and mtime."""
    for rel in rels:
        write(root, rel, data, when=when)


def old_temp(root: Path, rels: list[str], today: date) -> None:
    for rel in rels:
        write(root, rel, b"temp\n", when=stamp(today - timedelta(days=12)))


DOWNLOADS = [
    "factura_luz.pdf",
    "presupuesto_cocina.pdf",
    "IMG_2031.jpg",
    "IMG_2032.jpg",
    "IMG_2033.jpg",
    "captura 2026.png",
    "captura 2026 (1).png",
    "nomina_octubre.pdf",
    "setup_tool.zip",
    "datos_ventas.csv",
    "datos_ventas (1).csv",
    "cancion.mp3",
    "video_cumple.mp4",
    "contrato_alquiler.pdf",
    "entradas_concierto.pdf",
    "mapa.png",
    "notas_reunion.txt",
    "backup_telefono.zip",
]
DOWNLOADS_EN = [
    "invoice_march.pdf",
    "boarding_pass.pdf",
    "IMG_4410.jpg",
    "IMG_4411.jpg",
    "IMG_4412.jpg",
    "screenshot.png",
    "screenshot (1).png",
    "payslip.pdf",
    "installer.zip",
    "report_q3.csv",
    "report_q3 (1).csv",
    "song.mp3",
    "birthday.mp4",
    "lease.pdf",
    "tickets.pdf",
    "map.png",
    "meeting_notes.txt",
]


# ------------------------------------------------------------------------------- bad weeks


def _marta(root: Path, today: date) -> None:
    """A developer in Spanish: a nightly backup that fails, long days, a promise to Pedro not
    kept, a mood going down, the CSV copied by hand every morning, a messy Descargas, phone
    photos copied twice, old temporary files."""
    days = days_of(today)
    lines = []
    for day in days[1:]:
        d = day.isoformat()
        lines += [
            f"{d} 02:00:01 INFO backup start",
            f"tar (child): /mnt/ALMA_BACKUP/alma-{d}.tar.gz: Cannot open: No such file or directory",
            f"{d} 02:00:02 ERROR backup failed: tar exited with status 2",
        ]
    write(root, "logs/backup.log", "\n".join(lines) + "\n", when=stamp(today, 2))
    (root / "user" / "ALMA_BACKUPS").mkdir(parents=True, exist_ok=True)
    moods = [
        "Buen día, el sprint va bien.",
        "Algo cansada hoy, pero avanzando.",
        "Estoy cansada y agobiada con la migración.",
        "Muy cansada. Harta de que el backup falle.",
        "Agotada, frustrada, sin ganas de nada.",
        "Estoy agotada y estresada, no duermo bien.",
        "Hoy otra vez agobiada y cansada, fatal.",
    ]
    for n, day in enumerate(days):
        turns: list[Turn] = [("09:05", "usuario", moods[n])]
        turns.append(("09:06", "alma", "Anotado."))
        turns.append(("09:30", "usuario", "Otra vez copiando a mano los CSV de ventas a entregas."))
        if n == 1:
            turns.append(("11:00", "usuario", "Le mando a Pedro el informe trimestral el jueves."))
        if n in (2, 4):
            turns.append(("23:40", "usuario", "Sigo con la migración, no termino nunca."))
        if n == 3:
            turns.append(("00:35", "usuario", "Ya es de madrugada y sigo aquí."))
        chat_day(root, day, turns)
        write(
            root,
            f"user/entregas/{day.isoformat()}/ventas.csv",
            "fecha;total\n1;2\n",
            when=stamp(day, 9),
        )
    write(root, "user/entregas/ventas.csv", "fecha;total\n1;2\n", when=stamp(days[0], 8))
    loose_files(root, "user/Descargas", DOWNLOADS, days[2])
    photo = b"\xff\xd8\xff\xe0JFIF Granada " * 50
    for i in range(4):
        data = photo + bytes([i])
        when = stamp(days[0], 10 + i)
        same_bytes(
            root,
            [f"user/Fotos/2026-11-Granada/IMG_{i:04d}.jpg", f"user/Movil/DCIM/IMG_{i:04d}.jpg"],
            data,
            when,
        )
    old_temp(
        root,
        ["user/proyecto/~informe.tmp", "user/proyecto/.DS_Store", "user/proyecto/notas.txt~"],
        today,
    )


def _javier(root: Path, today: date) -> None:
    """A freelance in Spanish: tests failing every day, nights past midnight, a quote promised
    to a client, a mood going down, a messy Escritorio, invoices downloaded twice, temp files."""
    days = days_of(today)
    lines = []
    for day in days[2:]:
        d = day.isoformat()
        lines += [
            f"{d} 18:00:00 collected 42 items",
            f"{d} 18:00:09 FAILED tests/test_api.py::test_login - AssertionError: 401 != 200",
            f"{d} 18:00:09 ===== 1 failed, 41 passed =====",
        ]
    write(root, "logs/ci/tests.log", "\n".join(lines) + "\n", when=stamp(today, 18))
    moods = [
        "Empiezo la semana con ganas.",
        "Bien, aunque el cliente aprieta.",
        "Un poco cansado.",
        "Cansado y frustrado con el login.",
        "Harto, agobiado, el test sigue fallando.",
        "Agotado. Estresado con la entrega.",
        "Fatal, sin ganas, cansado de todo.",
    ]
    for n, day in enumerate(days):
        turns: list[Turn] = [("10:00", "usuario", moods[n]), ("10:01", "alma", "Entendido.")]
        if n == 2:
            turns.append(("12:30", "usuario", "Mañana te mando el presupuesto de la web, Carmen."))
        if n in (3, 5):
            turns.append(("01:10", "usuario", "Otra noche sin dormir arreglando el login."))
        chat_day(root, day, turns)
    loose_files(root, "user/Escritorio", [f"Escritorio_{n}" for n in DOWNLOADS], days[1])
    invoice = b"%PDF-1.4 factura cliente " * 80
    for i in range(3):
        same_bytes(
            root,
            [f"user/Documentos/facturas/factura_{i}.pdf", f"user/Descargas/factura_{i} (1).pdf"],
            invoice + bytes([i]),
            stamp(days[1], 9 + i),
        )
    old_temp(root, ["user/web/.~lock.presupuesto.odt#", "user/web/build.tmp"], today)


def _emily(root: Path, today: date) -> None:
    """A designer in English: a sync that fails every night, long days, slides promised to Tom,
    a mood going down, a messy Downloads, photos copied twice, old temporary files."""
    days = days_of(today)
    lines = []
    for day in days[1:]:
        d = day.isoformat()
        lines += [f"{d} 01:00:00 sync start", f"{d} 01:00:04 ERROR rsync failed: exit code 23"]
    write(root, "logs/sync.log", "\n".join(lines) + "\n", when=stamp(today, 1))
    moods = [
        "Good start to the week.",
        "A bit tired today.",
        "Tired and stressed about the launch.",
        "Exhausted, and the client hates the logo.",
        "So tired. Overwhelmed by everything.",
        "Exhausted and anxious, I can't sleep.",
        "Burned out and miserable today.",
    ]
    for n, day in enumerate(days):
        turns: list[Turn] = [("08:50", "usuario", moods[n]), ("08:51", "alma", "Noted.")]
        if n == 1:
            turns.append(("15:00", "usuario", "I'll send Tom the launch slides on Thursday."))
        if n in (1, 3, 5):
            turns.append(("23:55", "usuario", "Still polishing the launch deck."))
        chat_day(root, day, turns)
    loose_files(root, "user/Downloads", DOWNLOADS_EN, days[2])
    photo = b"\xff\xd8\xff\xe0JFIF Lisbon " * 40
    for i in range(3):
        same_bytes(
            root,
            [f"user/Photos/2026-Lisbon/DSC_{i:04d}.jpg", f"user/Phone/Camera/DSC_{i:04d}.jpg"],
            photo + bytes([i]),
            stamp(days[0], 11 + i),
        )
    old_temp(root, ["user/design/.DS_Store", "user/design/logo.psd~"], today)


# ------------------------------------------------------------------------------ calm weeks


def _lucia(root: Path, today: date) -> None:
    """A teacher in Spanish, a calm week: talk about tomorrow that is no promise, a promise
    kept, a backup log with one bad night, tidy folders, one file copied once."""
    days = days_of(today)
    talk = [
        "Mañana empieza una semana dura, pero estoy tranquila.",
        "Tengo que llamar al fontanero mañana.",
        "Mañana es viernes y hay cena de empresa.",
        "Llamé al fontanero, viene el martes. Hecho.",
        "Día tranquilo corrigiendo exámenes.",
        "Mañana es lunes y hay reunión de claustro.",
        "Buen día, he salido a caminar.",
    ]
    for n, day in enumerate(days):
        chat_day(
            root,
            day,
            [
                ("09:10", "usuario", talk[n]),
                ("09:11", "alma", "De acuerdo."),
                ("16:30", "usuario", "Termino por hoy."),
            ],
        )
    lines = [f"{d.isoformat()} 02:00:00 INFO backup ok" for d in days]
    lines.insert(3, f"{days[2].isoformat()} 02:00:01 ERROR backup failed: disk busy")
    write(root, "logs/backup.log", "\n".join(lines) + "\n", when=stamp(today, 2))
    loose_files(
        root, "user/Clases", ["tema1.pdf", "tema2.pdf", "notas.ods", "horario.pdf"], days[0]
    )
    loose_files(root, "user/Fotos/Excursion", [f"foto_{i}.jpg" for i in range(6)], days[1])
    write(root, "user/Documentos/programacion.odt", "programación 2026\n", when=stamp(days[0]))
    write(
        root,
        "user/Clases/2026-11/programacion.odt",
        "programación 2026, revisada\n",
        when=stamp(days[3]),
    )


def _tom(root: Path, today: date) -> None:
    """An accountant in English, a calm week: plans for tomorrow, a promise kept, tidy files."""
    days = days_of(today)
    talk = [
        "Tomorrow is Friday and there is a team lunch.",
        "I'll call the dentist tomorrow.",
        "Called the dentist, the appointment is on Tuesday. Done.",
        "Quiet day closing the monthly books.",
        "Tomorrow starts the audit week.",
        "Good day, went for a run after work.",
        "Reviewed the budget with Anna, all fine.",
    ]
    for n, day in enumerate(days):
        chat_day(
            root,
            day,
            [
                ("08:30", "usuario", talk[n]),
                ("08:31", "alma", "Noted."),
                ("17:00", "usuario", "Logging off."),
            ],
        )
    write(
        root,
        "logs/cron/ledger.log",
        "".join(f"{d.isoformat()} 06:00:00 INFO export ok\n" for d in days),
        when=stamp(today, 6),
    )
    loose_files(root, "user/Ledgers", ["2026-10.ods", "2026-11.ods", "notes.txt"], days[0])
    loose_files(root, "user/Receipts", [f"receipt_{i}.pdf" for i in range(8)], days[2])


def _andres(root: Path, today: date) -> None:
    """A writer in Spanish, a calm week: one tired day (not a trend), one late night, chapters
    in folders, a script run that failed once."""
    days = days_of(today)
    talk = [
        "Hoy he escrito dos páginas del capítulo cinco.",
        "Estoy algo cansado, pero contento con el avance.",
        "He reescrito el final del capítulo. Me gusta.",
        "Día de lectura y notas.",
        "He corregido el capítulo seis.",
        "Paseo largo y buenas ideas para el siete.",
        "Capítulo siete empezado.",
    ]
    for n, day in enumerate(days):
        turns: list[Turn] = [("10:00", "usuario", talk[n]), ("10:01", "alma", "Qué bien.")]
        if n == 4:
            turns.append(("23:30", "usuario", "Se me ha hecho tarde escribiendo."))
        chat_day(root, day, turns)
    write(
        root,
        "logs/export.log",
        f"{days[4].isoformat()} 20:00:00 ERROR pandoc failed: exit code 1\n"
        f"{days[5].isoformat()} 20:00:00 INFO export ok\n",
        when=stamp(days[5], 20),
    )
    for chapter in range(1, 8):
        write(
            root,
            f"user/novela/capitulo_{chapter}.md",
            f"# Capítulo {chapter}\n",
            when=stamp(days[0]),
        )
    loose_files(root, "user/novela/notas", ["personajes.md", "lugares.md", "ideas.md"], days[1])


WEEKS = [
    Week(
        "marta-es",
        "es",
        True,
        [
            ("repeated_failure", "logs/backup.log"),
            ("long_hours", None),
            ("pending_task", None),
            ("low_mood", None),
            ("routine", None),
            ("organize", "user/Descargas"),
            ("duplicates", None),
            ("temp_cleanup", None),
        ],
        _marta,
    ),
    Week(
        "javier-es",
        "es",
        True,
        [
            ("repeated_failure", "logs/ci/tests.log"),
            ("long_hours", None),
            ("pending_task", None),
            ("low_mood", None),
            ("organize", "user/Escritorio"),
            ("duplicates", None),
            ("temp_cleanup", None),
        ],
        _javier,
    ),
    Week(
        "emily-en",
        "en",
        True,
        [
            ("repeated_failure", "logs/sync.log"),
            ("long_hours", None),
            ("pending_task", None),
            ("low_mood", None),
            ("organize", "user/Downloads"),
            ("duplicates", None),
            ("temp_cleanup", None),
        ],
        _emily,
    ),
    Week("lucia-es", "es", False, [], _lucia),
    Week("tom-en", "en", False, [], _tom),
    Week("andres-es", "es", False, [], _andres),
]

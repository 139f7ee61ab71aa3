"""The training export through the real ``alma-agentd`` and ``alma-ctl``: a week of chats,
with a PIN and an API key dictated in them, exported in every format; MLX-LM's and ShareGPT's
files checked against the formats as their documentation gives them; the secrets absent and
counted; the split the same on every export; nothing ever overwritten."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from control.commands import EXPORT_FORMATS
from tests.support.daemon import DaemonRoot

pytestmark = pytest.mark.e2e

PIN = "4321"
KEY = "sk-abc123def456ghi789jkl"
TOPICS = ["el huerto", "la bici", "el presupuesto", "la tesis", "el viaje", "la mudanza", "el coro"]


def _week(d: DaemonRoot) -> None:
    """Seven days of chat; the fourth holds the PIN and the key (said, and repeated by alma),
    a private note, an exact duplicate and a near-empty turn."""
    start = date(2026, 11, 16)
    for n, topic in enumerate(TOPICS):
        day = start + timedelta(days=n)
        turns = []
        for i in range(6):
            turns += [
                ("usuario", f"Hoy avancé con {topic}, parte {i}. ¿Qué me recomiendas?"),
                ("alma", f"Sigue con {topic} a tu ritmo; la parte {i} va bien."),
            ]
        if n == 3:
            turns += [
                ("usuario", f"mi PIN del banco es {PIN} y la clave de la API es {KEY}"),
                ("alma", f"Anotado: tu PIN es {PIN}."),
                ("usuario", "¿Cuál era mi PIN?"),
                ("alma", f"Tu PIN del banco es {PIN}."),
                ("usuario", "Lo de mi salud queda entre nosotros #privado"),
                ("alma", "Entendido, no lo comparto."),
                ("usuario", f"Hoy avancé con {topic}, parte 0. ¿Qué me recomiendas?"),
                ("alma", f"Sigue con {topic} a tu ritmo; la parte 0 va bien."),
                ("usuario", "ok"),
                ("alma", "Perfecto."),
            ]
        text = f"# {day.isoformat()}\n"
        for i, (speaker, said) in enumerate(turns):
            text += f"\n## 09:{i:02d}:00 · {speaker}\n{said}\n"
        d.write(f"logs/{day.isoformat()}.md", text.encode())


def _lines(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert rows, f"{path} is empty"
    return rows


def _alternates(roles: list[str], system: str, user: str, assistant: str) -> None:
    """An optional system turn first, then user and assistant in turn, the assistant's last."""
    body = roles[1:] if roles and roles[0] == system else roles
    assert body, roles
    assert system not in body, roles
    assert body == [user if i % 2 == 0 else assistant for i in range(len(body))], roles
    assert body[-1] == assistant, roles


def check_mlx_chat(row: dict[str, Any]) -> None:
    """MLX-LM's chat data (mlx_lm LORA.md, "Data"): one object per line with ``messages``, a
    list of ``{"role", "content"}`` in the OpenAI chat form."""
    assert set(row) == {"messages"}, row
    messages = row["messages"]
    assert isinstance(messages, list) and messages, row
    for m in messages:
        assert set(m) == {"role", "content"}, m
        assert m["role"] in ("system", "user", "assistant"), m
        assert isinstance(m["content"], str) and m["content"].strip(), m
    _alternates([m["role"] for m in messages], "system", "user", "assistant")


def check_sharegpt(row: dict[str, Any]) -> None:
    """ShareGPT as Unsloth (``standardize_sharegpt``) and axolotl (``chat_template`` with
    ``field_messages: conversations``) read it: ``conversations``, a list of ``{"from",
    "value"}`` with ``from`` one of system, human, gpt."""
    assert set(row) == {"conversations"}, row
    turns = row["conversations"]
    assert isinstance(turns, list) and turns, row
    for t in turns:
        assert set(t) == {"from", "value"}, t
        assert t["from"] in ("system", "human", "gpt"), t
        assert isinstance(t["value"], str) and t["value"].strip(), t
    _alternates([t["from"] for t in turns], "system", "human", "gpt")


def _no_secret(*paths: Path) -> None:
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert PIN not in text and KEY not in text and "sk-abc" not in text, path


@pytest.mark.slow
def test_a_week_exported_for_every_trainer_without_its_secrets(alma: DaemonRoot) -> None:
    _week(alma)
    alma.start()
    out = alma.base / "out"
    out.mkdir()
    expected_examples = 7 * 6  # the private one, the secrets, the duplicate and "ok" left out
    dropped = {"duplicate": 1, "empty": 1, "private": 1, "secret": 2}

    mlx = out / "mlx"
    doc = alma.ok("memory", "export", "--format", "mlx", "--system", "--dir", str(mlx))
    summary = doc["summary"]
    assert summary["examples"] == expected_examples and summary["dropped"] == dropped
    assert summary["train"] + summary["valid"] == expected_examples and summary["valid"] >= 1
    assert summary["tokens"] > 0 and isinstance(summary["tokens_estimated"], bool)
    train, valid = _lines(mlx / "train.jsonl"), _lines(mlx / "valid.jsonl")
    assert (len(train), len(valid)) == (summary["train"], summary["valid"])
    persona = (alma.root / "system" / "persona.md").read_text(encoding="utf-8").strip()
    for row in train + valid:
        check_mlx_chat(row)
        assert row["messages"][0] == {"role": "system", "content": persona}
    assert (mlx / "train.jsonl").stat().st_mode & 0o777 == 0o600
    _no_secret(mlx / "train.jsonl", mlx / "valid.jsonl")

    # The split is the same on every export: a second folder holds the same bytes.
    again = out / "mlx-again"
    alma.ok("memory", "export", "--format", "mlx", "--system", "--dir", str(again))
    for name in ("train.jsonl", "valid.jsonl"):
        assert (again / name).read_bytes() == (mlx / name).read_bytes()

    share = out / "share.jsonl"
    doc = alma.ok("memory", "export", "--format", "sharegpt", "--output", str(share))
    assert doc["summary"]["dropped"] == dropped and doc["split"] is False
    rows = _lines(share)
    assert len(rows) == expected_examples
    for row in rows:
        check_sharegpt(row)
    split = out / "share-split"
    doc = alma.ok(
        "memory", "export", "--format", "sharegpt", "--valid", "0.2", "--output", str(split)
    )
    assert doc["split"] is True
    for row in _lines(split / "train.jsonl") + _lines(split / "valid.jsonl"):
        check_sharegpt(row)

    for fmt in EXPORT_FORMATS:
        if fmt in ("mlx",):
            continue
        target = out / f"{fmt}.jsonl"
        doc = alma.ok("memory", "export", "--format", fmt, "--output", str(target))
        assert doc["summary"]["dropped"]["secret"] == 2
        assert len(_lines(target)) == expected_examples
    _no_secret(*out.glob("*.jsonl"), split / "train.jsonl", split / "valid.jsonl")

    # What was withheld is listed masked, and comes back only when asked.
    listing = alma.ctl("memory", "export", "--list-withheld", json_out=False).ok()
    assert "2026-11-19" in listing.stdout and "[password]" in listing.stdout
    assert PIN not in listing.stdout and KEY not in listing.stdout
    withheld = alma.ok("memory", "export", "--list-withheld")["withheld"]
    assert [w["why"] for w in withheld] == ["secret", "secret", "private"]
    first = withheld[0]["id"]
    one = alma.ok("memory", "export", "--include", first, "--format", "chatml")
    assert one["summary"]["examples"] == expected_examples + 1
    every = out / "every.jsonl"
    alma.ok("memory", "export", "--include-secrets", "--output", str(every))
    assert PIN in every.read_text(encoding="utf-8") and KEY in every.read_text(encoding="utf-8")

    # Nothing is overwritten: a second export into the same folder is refused, files kept.
    before = (mlx / "train.jsonl").read_bytes()
    refused = alma.ctl("memory", "export", "--format", "mlx", "--dir", str(mlx))
    assert refused.rc == 1 and "already exists" in refused.stderr
    assert (mlx / "train.jsonl").read_bytes() == before
    both = alma.ctl("memory", "export", "--output", str(every), "--dir", str(mlx))
    assert both.rc == 2 and "not both" in both.stderr

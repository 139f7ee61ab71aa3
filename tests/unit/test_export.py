"""The training export (agent.memory.export): its formats, the split, the clean-up, and what
never leaves the root by default."""

from __future__ import annotations

import json
from pathlib import Path

from agent.memory.export import export

KEY = "sk-abc123def456ghi789jkl"


def _day(root: Path, day: str, turns: list[tuple[str, str]]) -> None:
    (root / "logs").mkdir(exist_ok=True)
    text = f"# {day}\n"
    for i, (speaker, said) in enumerate(turns):
        text += f"\n## {10 + i // 60:02d}:{i % 60:02d}:00 · {speaker}\n{said}\n"
    (root / "logs" / f"{day}.md").write_text(text)


def _dictated(root: Path) -> None:
    _day(
        root,
        "2026-11-20",
        [
            ("usuario", f"mi PIN del banco es 4321 y la clave de la API es {KEY}"),
            ("alma", "Anotado: tu PIN es 4321."),
            ("usuario", "¿Cuál era mi PIN?"),
            ("alma", "Tu PIN del banco es 4321."),
            ("usuario", "Hoy revisé el presupuesto del proyecto."),
            ("alma", "Bien hecho; ¿quieres que lo recuerde?"),
        ],
    )


def test_a_dictated_pin_and_key_are_withheld_and_counted(tmp_path: Path) -> None:
    _dictated(tmp_path)
    out = export(tmp_path, "chatml")
    written = json.dumps(out["train"] + out["valid"], ensure_ascii=False)
    assert "4321" not in written and KEY not in written
    assert out["summary"]["examples"] == 1
    assert out["summary"]["dropped"] == {"secret": 2}
    listed = json.dumps(out["withheld"], ensure_ascii=False)
    assert "4321" not in listed and KEY not in listed
    assert [w["day"] for w in out["withheld"]] == ["2026-11-20", "2026-11-20"]
    assert out["withheld"][0]["kinds"] == ["password", "token"]


def test_withheld_examples_come_back_when_asked(tmp_path: Path) -> None:
    _dictated(tmp_path)
    first = export(tmp_path, "chatml")["withheld"][0]["id"]
    one = export(tmp_path, "chatml", include=[first])
    assert one["summary"]["examples"] == 2 and one["summary"]["dropped"] == {"secret": 1}
    every = export(tmp_path, "chatml", include_secrets=True)
    assert every["summary"]["examples"] == 3 and every["withheld"] == []


def test_private_hashtag_duplicates_and_near_empty_turns_are_dropped(tmp_path: Path) -> None:
    _day(
        tmp_path,
        "2026-11-21",
        [
            ("usuario", "Mi diagnóstico médico es reservado #privado"),
            ("alma", "Entendido."),
            ("usuario", "¿Qué tal el día?"),
            ("alma", "Tranquilo, gracias."),
            ("usuario", "¿Qué tal el día?"),
            ("alma", "Tranquilo, gracias."),
            ("usuario", "ok"),
            ("alma", "Perfecto."),
        ],
    )
    out = export(tmp_path, "sharegpt")
    assert out["summary"]["dropped"] == {"duplicate": 1, "empty": 1, "private": 1}
    assert out["train"] == [
        {
            "conversations": [
                {"from": "human", "value": "¿Qué tal el día?"},
                {"from": "gpt", "value": "Tranquilo, gracias."},
            ]
        }
    ]
    assert out["withheld"][0]["why"] == "private"


def test_split_is_by_content_and_the_same_every_time(tmp_path: Path) -> None:
    turns = []
    for i in range(60):
        turns += [("usuario", f"Pregunta número {i} sobre el huerto"), ("alma", f"Respuesta {i}.")]
    _day(tmp_path, "2026-11-22", turns)
    a = export(tmp_path, "mlx")
    b = export(tmp_path, "mlx")
    assert a == b and a["split"] is True
    assert a["summary"]["train"] + a["summary"]["valid"] == 60
    assert 1 <= a["summary"]["valid"] <= 15
    # An example stays on its side when others are added or removed.
    valid = {json.dumps(r) for r in a["valid"]}
    _day(tmp_path, "2026-11-23", [("usuario", "Otra cosa distinta"), ("alma", "Vale, anotado.")])
    c = export(tmp_path, "mlx")
    assert valid <= {json.dumps(r) for r in c["valid"]}
    assert export(tmp_path, "chatml")["split"] is False
    assert export(tmp_path, "chatml")["valid"] == []


def test_a_small_split_export_still_has_a_valid_example(tmp_path: Path) -> None:
    _day(
        tmp_path,
        "2026-11-22",
        [
            ("usuario", "Hola, ¿qué tal?"),
            ("alma", "Bien."),
            ("usuario", "¿Y mañana?"),
            ("alma", "Lluvia."),
        ],
    )
    out = export(tmp_path, "mlx")
    assert out["summary"]["valid"] == 1 and out["summary"]["train"] == 1


def test_the_persona_is_the_system_turn_when_asked(tmp_path: Path) -> None:
    _day(tmp_path, "2026-11-22", [("usuario", "¿Qué hago hoy?"), ("alma", "Riega el huerto.")])
    rows = export(tmp_path, "mlx", valid=0.0, system="Eres ALMA.")["train"]
    assert rows[0]["messages"][0] == {"role": "system", "content": "Eres ALMA."}
    share = export(tmp_path, "sharegpt", system="Eres ALMA.")["train"][0]["conversations"]
    assert share[0] == {"from": "system", "value": "Eres ALMA."}
    alpaca = export(tmp_path, "alpaca", system="Eres ALMA.")["train"][0]
    assert alpaca["system"] == "Eres ALMA." and alpaca["instruction"] == "¿Qué hago hoy?"


def test_tokens_by_the_model_or_an_estimate_said_as_such(tmp_path: Path) -> None:
    _day(tmp_path, "2026-11-22", [("usuario", "¿Qué hago hoy?"), ("alma", "Riega el huerto.")])
    estimated = export(tmp_path, "chatml")["summary"]
    assert estimated["tokens_estimated"] is True and estimated["tokens"] > 0
    counted = export(tmp_path, "chatml", count=lambda text: 7)["summary"]
    assert counted == {**estimated, "tokens": 7, "tokens_estimated": False}
    unloaded = export(tmp_path, "chatml", count=lambda text: None)["summary"]
    assert unloaded["tokens_estimated"] is True

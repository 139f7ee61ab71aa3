"""What looks like a secret (policies.secrets): Spanish and English, and ordinary text that
must pass."""

from __future__ import annotations

import pytest

from policies.secrets import find, kinds, masked

SECRETS = [
    ("mi PIN del banco es 4321", "password", "4321"),
    ("la contraseña del wifi es Perro123!", "password", "Perro123!"),
    ("my password is hunter2", "password", "hunter2"),
    ("password: s3cr3t", "password", "s3cr3t"),
    ("La clave de la API es sk-abc123def456ghi789", "token", "sk-abc123def456ghi789"),
    ("token ghp_A1b2C3d4E5f6G7h8I9j0K1l2", "token", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2"),
    ("AWS: AKIAIOSFODNN7EXAMPLE", "token", "AKIAIOSFODNN7EXAMPLE"),
    ("mi tarjeta es 4111 1111 1111 1111", "card", "4111 1111 1111 1111"),
    ("card 5500-0000-0000-0004 expires soon", "card", "5500-0000-0000-0004"),
    ("mi IBAN es ES91 2100 0418 4502 0005 1332", "iban", "ES91 2100 0418 4502 0005 1332"),
    ("el número de cuenta es 0049 1500 0512 3456", "account", "0049 1500 0512 3456"),
    ("export KEY=aZ3kP9qL2xW8vB5nM1cR7tY4", "token", "aZ3kP9qL2xW8vB5nM1cR7tY4"),
]

PLAIN = [
    "mi pin de la bici es azul",
    "La clave es la constancia.",
    "Quedamos el 12/03/2026 a las 10:30.",
    "Llámame al 612 345 678 o al +34 912 345 678 mañana.",
    "La cuenta del restaurante es 45 euros.",
    "the password policy requires 12 characters",
    "El commit 3f2a9c1e5b7d4a6f8e0c2b4d6f8a0c1e3b5d7f9a arregla el fallo.",
    "Instalé python3.11 en /usr/local/lib/python3.11/site-packages hoy",
    "El pedido 1234 5678 9012 llega el lunes.",
    "mi PIN es el de siempre",
]


@pytest.mark.parametrize(("text", "kind", "secret"), SECRETS)
def test_secrets_found_and_masked(text: str, kind: str, secret: str) -> None:
    assert kind in kinds(text)
    shown = masked(text)
    assert secret not in shown
    assert f"[{kind}]" in shown or "[" in shown


@pytest.mark.parametrize("text", PLAIN)
def test_ordinary_text_passes(text: str) -> None:
    assert find(text) == []


def test_a_card_number_that_fails_luhn_is_not_a_card() -> None:
    assert find("número 4111 1111 1111 1112 del pedido") == []


def test_the_dictated_day_finds_the_pin_and_the_key() -> None:
    text = "mi PIN del banco es 4321 y la clave de la API es sk-abc123def456ghi789"
    shown = masked(text)
    assert "4321" not in shown and "sk-abc" not in shown
    assert kinds(text) == ["password", "token"]


def test_masked_is_cut_and_on_one_line() -> None:
    shown = masked("hola\n" + "x " * 100, limit=20)
    assert len(shown) == 20 and "\n" not in shown and shown.endswith("…")

"""alma-ctl's two command-line readers must agree.

``cli._quick_line`` reads plain lines without argparse (for start-up time); whatever it accepts
must mean exactly what argparse makes of the same line, and whatever argparse refuses it must
refuse too (return None, so argparse prints the usage error).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from control import cli
from control.commands import COMMANDS, Arg, Command

GROUPS = sorted({name.partition(".")[0] for name in COMMANDS if "." in name})
WORDS = sorted({word for name in COMMANDS for word in name.split(".")} | {"init"})
FLAGS = sorted(
    {spec.flag or "--" + spec.name.replace("_", "-") for c in COMMANDS.values() for spec in c.args if not spec.positional}
)  # fmt: skip
ODD = ["-h", "--help", "--js", "--ro", "--", "-", "-5", "--json=1", "--root=", "-x y", "", "ñ"]


def argparse_reading(argv: list[str]) -> cli.Line | None:
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return cli._argparse_line(argv)
    except SystemExit:
        return None


def values_for(spec: Arg) -> st.SearchStrategy[str]:
    odd = st.sampled_from(["", "-1", "-x", " 7", "1_0", "٣", "x", "0", "ñandú", "a=b"])
    if spec.type == "int":
        return st.one_of(st.integers(-2, 10**6).map(str), odd)
    if spec.choices:
        return st.one_of(st.sampled_from([*spec.choices, "nope"]), odd)
    return st.one_of(st.text(max_size=6), odd)


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """Mostly well-formed lines of one command, then stirred: reordered, cut, with odd tokens."""
    command: Command = draw(st.sampled_from(list(COMMANDS.values())))
    positionals: list[str] = []
    options: list[list[str]] = []
    for spec in command.args:
        if not (spec.required or draw(st.booleans())):
            continue
        if spec.positional:
            positionals.append(draw(values_for(spec)))
            continue
        flag = spec.flag or "--" + spec.name.replace("_", "-")
        if spec.type == "bool":
            options.append([flag])
            continue
        for _ in range(draw(st.integers(1, 2 if spec.type == "list[str]" else 1))):
            value = draw(values_for(spec))
            options.append([f"{flag}={value}"] if draw(st.booleans()) else [flag, value])
    if command.name == "memory.export" and draw(st.booleans()):
        options.append(["--output", draw(st.sampled_from(["out.jsonl", "-o", "x y"]))])
    for _ in range(draw(st.integers(0, 2))):
        options.append(
            draw(st.sampled_from([["--json"], ["--root", "/r/ñ"], ["--root=/s"], ["--root"]]))
        )
    options = draw(st.permutations(options))
    cut = draw(st.integers(0, len(options)))
    line = command.name.split(".")
    if draw(st.booleans()) and options:  # a global option between or before the command words
        line.insert(draw(st.integers(0, len(line))), "--json")
    line += [token for option in options[:cut] for token in option]
    line += positionals
    line += [token for option in options[cut:] for token in option]
    if draw(st.integers(0, 4)) == 0:  # stir: an odd token, a word dropped or repeated
        junk = draw(st.sampled_from([*ODD, *WORDS, *FLAGS]))
        line.insert(draw(st.integers(0, len(line))), junk)
    if draw(st.integers(0, 6)) == 0 and line:
        del line[draw(st.integers(0, len(line) - 1))]
    return line


def check_agreement(argv: list[str]) -> None:
    quick = cli._quick_line(list(argv))
    event("quick reader" if quick is not None else "argparse reader")
    if quick is not None:
        assert quick == argparse_reading(list(argv)), argv


@pytest.mark.slow  # 3,000 examples: minutes on a loaded machine
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command_lines())
def test_the_quick_reader_means_what_argparse_means(argv: list[str]) -> None:
    check_agreement(argv)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from([*WORDS, *FLAGS, *ODD, "7", "/r", "hola"]), max_size=7))
def test_the_quick_reader_on_any_token_soup(argv: list[str]) -> None:
    check_agreement(argv)


COMMON = [
    ["status"],
    ["--json", "status"],
    ["status", "--root", "/tmp/x", "--json"],
    ["suggestions", "list"],
    ["suggestions", "list", "--status", "pending"],
    ["suggestions", "show", "3"],
    ["suggestions", "accept", "3", "--json"],
    ["suggestions", "reject", "4"],
    ["autonomy", "off"],
    ["undo"],
    ["memory", "search", "¿qué decidí sobre la base de datos?", "--tag", "db", "--json"],
    ["memory", "--json", "search", "año", "--tag", "a", "--tag", "b"],
    ["--root=/media/ñu/ALMA", "history"],
]


@pytest.mark.parametrize("argv", COMMON, ids=" ".join)
def test_common_lines_take_the_quick_reader(argv: list[str]) -> None:
    quick = cli._quick_line(argv)
    assert quick is not None, "this line should not need argparse"
    assert quick == argparse_reading(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["status", "-h"],
        ["stat"],
        ["init"],
        ["suggestions", "show"],
        ["suggestions", "show", "x"],
        ["suggestions", "show", "3", "4"],
        ["memory", "search", "q", "--ta", "x"],
        ["memory", "search", "q", "--tag"],
        ["memory", "search", "q", "--tag", "-x"],
        ["--root"],
        ["memory"],
    ],
    ids=" ".join,
)
def test_anything_unsure_goes_to_argparse(argv: list[str]) -> None:
    assert cli._quick_line(argv) is None


def test_status_starts_without_argparse_pathlib_socket_or_typing(tmp_path: Path) -> None:
    # What the quick reader and the lean client are for: keep these out of `alma-ctl status`
    # (typing and contextlib cost every start milliseconds: docs/benchmarks.md).
    heavy = ("argparse", "pathlib", "socket", "shutil", "typing", "contextlib")
    code = (
        "import sys\n"
        "from control import ctl\n"
        f"code = ctl.main(['--root', {str(tmp_path / 'ALMA')!r}, 'status'])\n"
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert done.stdout.strip().splitlines()[-1] == "3 []"

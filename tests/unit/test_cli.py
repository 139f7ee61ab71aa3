"""alma-ctl's command line (control.cli: argparse built from the command table), read against
the table.

The properties generate what a person means (a command, values for its arguments, the global
options), write it as a line in any of the ways argparse took (``--flag=value`` or ``--flag
value``, options before, between or after the command words and the places, ``--`` before
places that look like options, a repeated option), and check the reader gets that meaning
back; on any soup of tokens it gives a line that means something valid, the help, or one usage
sentence, and nothing else.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from control import cli
from control.cli import Help, Line, UsageError, read_line
from control.commands import COMMANDS, Arg, Command

CLI_COMMANDS = [command for command in COMMANDS.values() if command.cli]
WORDS = sorted({word for name in COMMANDS for word in name.split(".")} | {"init"})
FLAGS = sorted({spec.spelling for c in COMMANDS.values() for spec in c.args if not spec.positional})
ODD = ["-h", "--help", "--js", "--ro", "--", "-", "-5", "--json=1", "--root=", "-x y", "", "ñ"]


def looks_like_option(token: str) -> bool:
    """What argparse takes for an option: a dash and more, unless a negative number or spaced."""
    negative = re.fullmatch(r"-\d+|-\d*\.\d+", token) is not None
    return token.startswith("-") and token != "-" and not negative and " " not in token


def value_for(spec: Arg) -> st.SearchStrategy[object]:
    if spec.type == "int":
        return st.integers(-(10**6), 10**12)
    if spec.type == "float":
        return st.floats(-1.0, 2.0, allow_nan=False)
    if spec.choices:
        return st.sampled_from(spec.choices)
    odd = st.sampled_from(
        ["", "-x", "--", "-", "-1", "-.5", "-٣", "a=b", "--json", "- lista", "ñandú", "-h", "-1."]
    )
    return st.one_of(st.text(max_size=8), odd)


def option_tokens(flag: str, value: object, draw: st.DrawFn) -> list[str]:
    text = str(value)
    if looks_like_option(text) or draw(st.booleans()):
        return [f"{flag}={text}"]
    return [flag, text]


@st.composite
def meanings(draw: st.DrawFn) -> tuple[Line, list[str]]:
    """A line as the person means it, and one way of writing it."""
    command: Command = draw(st.sampled_from(CLI_COMMANDS))
    args: dict[str, object] = {}
    options: list[list[str]] = []
    places: list[str] = []
    for spec in command.args:
        if not (spec.required or draw(st.booleans())):
            continue
        if spec.positional:
            count = draw(st.integers(1, 3)) if spec.type == "list[str]" else 1
            values = [draw(value_for(spec)) for _ in range(count)]
            args[spec.name] = values if spec.type == "list[str]" else values[0]
            places += [str(value) for value in values]
        elif spec.type == "bool":
            args[spec.name] = True
            options.append([spec.spelling])
        elif spec.type == "list[str]":
            listed = [draw(value_for(spec)) for _ in range(draw(st.integers(1, 3)))]
            args[spec.name] = listed  # one chunk: the order of a list is its meaning
            options.append([t for v in listed for t in option_tokens(spec.spelling, v, draw)])
        else:
            args[spec.name] = draw(value_for(spec))
            said = option_tokens(spec.spelling, args[spec.name], draw)
            if draw(st.integers(0, 4)) == 0:  # said twice: the last one counts
                said = option_tokens(spec.spelling, draw(value_for(spec)), draw) + said
            options.append(said)
    output = None
    if command.name == "memory.export" and draw(st.booleans()):
        output = draw(st.sampled_from(["out.jsonl", "-o", "x y"]))
        options.append(option_tokens("--output", output, draw))
    root = None
    if draw(st.booleans()):
        root = draw(st.sampled_from(["/r/ñ", "", "-r", "a b"]))
        options.append(option_tokens("--root", root, draw))
    as_json = draw(st.booleans())
    if as_json:
        options.append(["--json"])
    words = command.spelling.split()
    # Global options may come before or between the command words too.
    early = [o for o in options if o[0].partition("=")[0] in ("--root", "--json")]
    early = [o for o in early if draw(st.booleans())]
    late = draw(st.permutations([o for o in options if o not in early]))
    head: list[list[str]] = [[word] for word in words]
    for option in early:
        at = draw(st.integers(0, len(head) - 1))  # before the last command word at the latest
        head.insert(at, option)
    if any(looks_like_option(place) for place in places):
        tail = [*late, ["--", *places]]
    else:  # places and options interleaved, the places keeping their order
        tail = [[place] for place in places]
        for option in late:
            tail.insert(draw(st.integers(0, len(tail))), option)
    line = [token for chunk in [*head, *tail] for token in chunk]
    meant = Line(command, args, root=root, as_json=as_json, output=output)
    return meant, line


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(meanings())
def test_every_way_of_writing_a_line_reads_as_what_was_meant(case: tuple[Line, list[str]]) -> None:
    meant, argv = case
    event("--" if "--" in argv else "no --")
    assert read_line(argv) == meant, argv


def written(line: Line) -> list[str]:
    """One plain way of writing ``line``."""
    places: list[str] = []
    if line.command is None:
        argv = ["init", *(["--with-examples"] if line.with_examples else [])]
    else:
        argv = line.command.spelling.split()
        for spec in line.command.args:
            if spec.name not in line.args:
                continue
            value = line.args[spec.name]
            values = value if isinstance(value, list) else [value]
            if spec.positional:
                places += [str(v) for v in values]
            elif spec.type == "bool":
                argv.append(spec.spelling)
            else:
                argv += [f"{spec.spelling}={v}" for v in values]
        if line.output is not None:
            argv.append(f"--output={line.output}")
    if line.root is not None:
        argv.append(f"--root={line.root}")
    return argv + (["--json"] if line.as_json else []) + ["--", *places]


def valid(line: Line) -> bool:
    """Whether what the line gives are values the table's types and choices allow."""
    if line.command is None:
        return line.args == {} and line.output is None
    specs = line.command.by_name
    for name, value in line.args.items():
        spec = specs[name]
        items = value if spec.type == "list[str]" else [value]
        if not isinstance(items, list) or not items:
            return False
        kind = {"int": int, "bool": bool}.get(spec.type, str)
        if not all(type(item) is kind for item in items):
            return False
        if spec.choices and not set(items) <= set(spec.choices):
            return False
    required = {spec.name for spec in line.command.args if spec.required}
    return required <= set(line.args) and (
        line.output is None or line.command.name == "memory.export"
    )


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(st.sampled_from([*WORDS, *FLAGS, *ODD, "7", "-3", "/r", "hola", "a b"]), max_size=7)
)
def test_any_soup_of_tokens_is_a_valid_line_the_help_or_one_usage_sentence(
    argv: list[str],
) -> None:
    try:
        line = read_line(list(argv))
    except Help as asked:
        event("help")
        assert "-h, --help" in asked.text and asked.text.endswith("\n")
        return
    except UsageError as refused:
        event("usage")
        assert refused.sentence and "\n" not in refused.sentence
        assert refused.usage.startswith("usage: alma-ctl") and refused.usage.endswith("\n")
        return
    event("line")
    assert valid(line), line
    assert read_line(written(line)) == line


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["status"], Line(COMMANDS["status"], {}, root=None, as_json=False)),
        (["--json", "status"], Line(COMMANDS["status"], {}, root=None, as_json=True)),
        (["status", "--root", "/x", "--json"], Line(COMMANDS["status"], {}, root="/x", as_json=True)),
        (["suggestions", "--json", "show", "3"], Line(COMMANDS["suggestions.show"], {"id": 3}, root=None, as_json=True)),
        (["--root=/media/ñu/ALMA", "history"], Line(COMMANDS["history"], {}, root="/media/ñu/ALMA", as_json=False)),
        (["memory", "search", "año", "--tag", "a", "--tag=b"], Line(COMMANDS["memory.search"], {"query": "año", "tags": ["a", "b"]}, root=None, as_json=False)),
        # Negative numbers are values, of an option or in a place (the table then refuses them).
        (["trash", "empty", "--older-than", "-1"], Line(COMMANDS["trash.empty"], {"older_than_days": -1}, root=None, as_json=False)),
        (["undo", "-4"], Line(COMMANDS["undo"], {"id": -4}, root=None, as_json=False)),
        # `--` ends the options; a value with `=` may start with a dash.
        (["memory", "add", "--", "-nota", ], Line(COMMANDS["memory.add"], {"content": "-nota"}, root=None, as_json=False)),
        (["memory", "add", "x", "--project=-p"], Line(COMMANDS["memory.add"], {"content": "x", "project": "-p"}, root=None, as_json=False)),
        (["memory", "add", "- comprar pan"], Line(COMMANDS["memory.add"], {"content": "- comprar pan"}, root=None, as_json=False)),
        (["feedback", "--action", "3", "util"], Line(COMMANDS["feedback"], {"id": 3, "verdict": "util", "action": True}, root=None, as_json=False)),
        (["history", "--limit", "5", "--limit", "9"], Line(COMMANDS["history"], {"limit": 9}, root=None, as_json=False)),
        (["backup", "restore", "s1", "--to", "/t"], Line(COMMANDS["backup.restore"], {"snapshot": "s1", "to": "/t"}, root=None, as_json=False)),
        (["memory", "export", "--output", "o.jsonl"], Line(COMMANDS["memory.export"], {}, root=None, as_json=False, output="o.jsonl")),
        (["init", "--with-examples", "--root", "/r"], Line(None, {}, root="/r", as_json=False, with_examples=True)),
        # A command that is also a group: a leaf's word opens the leaf, any other is its own.
        (["report", "days", "--days", "30"], Line(COMMANDS["report.days"], {"days": 30}, root=None, as_json=False)),
        (["report", "2026-11-17"], Line(COMMANDS["report"], {"date": "2026-11-17"}, root=None, as_json=False)),
        (["report", "--refresh"], Line(COMMANDS["report"], {"refresh": True}, root=None, as_json=False)),
        (["memory", "edit", "abc", "--tags", "a,b", "--type", "fact"], Line(COMMANDS["memory.edit"], {"id": "abc", "tags": ["a,b"], "memory_type": "fact"}, root=None, as_json=False)),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)  # fmt: skip
def test_lines_people_type(argv: list[str], expected: Line) -> None:
    assert read_line(argv) == expected


TOP = "alma-ctl: error: "
REFUSALS = [
    ([], TOP + "the following arguments are required: COMMAND"),
    (["frobnicate"], TOP + "argument COMMAND: invalid choice: 'frobnicate' (choose from "),
    (["memory"], "alma-ctl memory: error: the following arguments are required: COMMAND"),
    (["memory", "frob"], "alma-ctl memory: error: argument COMMAND: invalid choice: 'frob' (choose from 'add', "),
    (["suggestions", "show"], "alma-ctl suggestions show: error: the following arguments are required: ID"),
    (["feedback"], "alma-ctl feedback: error: the following arguments are required: ID, VERDICT"),
    (["suggestions", "show", "tres"], "alma-ctl suggestions show: error: argument ID: invalid int value: 'tres'"),
    (["suggestions", "show", "3", "4"], "alma-ctl suggestions show: error: unrecognized arguments: 4"),
    (["autonomy", "level", "max"], "alma-ctl autonomy level: error: argument LEVEL: 'max' is not one of off, manual, suggest, auto"),
    (["suggestions", "list", "--status", "done"], "alma-ctl suggestions list: error: argument --status: 'done' is not one of pending, accepted, rejected, executed, failed, expired"),
    (["history", "--limit", "many"], "alma-ctl history: error: argument --limit: invalid int value: 'many'"),
    (["trash", "empty"], "alma-ctl trash empty: error: the following arguments are required: --older-than"),
    (["memory", "search", "q", "--tag"], "alma-ctl memory search: error: argument --tag: expected one argument"),
    (["memory", "search", "q", "--tag", "-x"], "alma-ctl memory search: error: argument --tag: expected one argument"),
    (["memory", "search", "q", "--tag", "--"], "alma-ctl memory search: error: argument --tag: expected one argument"),
    (["analyze", "--wait=yes"], "alma-ctl analyze: error: argument --wait: ignored explicit argument 'yes'"),
    (["memory", "add", "-nota"], "alma-ctl memory add: error: the following arguments are required: TEXT"),
    (["memory", "add", "x", "-nota"], "alma-ctl memory add: error: unrecognized arguments: -nota"),
    # Options are named in full: a prefix is not taken for the option it starts.
    (["memory", "search", "q", "--ta", "x"], "alma-ctl memory search: error: unrecognized arguments: --ta x"),
    (["status", "--js"], "alma-ctl status: error: unrecognized arguments: --js"),
    # An option of a command is read after the command word that opens it.
    (["--wait", "analyze"], "alma-ctl analyze: error: unrecognized arguments: --wait"),
    (["--root"], TOP + "argument --root: expected one argument"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "sentence"), REFUSALS, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_what_cannot_be_read_gets_argparses_sentence(
    argv: list[str], sentence: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError) as refused:
        read_line(argv)
    refused.value.show()
    out, err = capsys.readouterr()
    said = err.splitlines()[-1]  # after the usage, which may wrap
    assert out == "" and err.startswith("usage: alma-ctl ") and said.startswith(sentence)
    assert said == f"{refused.value.prog}: error: {refused.value.sentence}"
    assert err == refused.value.usage + said + "\n"


def flat(text: str) -> str:
    return " ".join(text.split())


def help_of(argv: list[str]) -> str:
    with pytest.raises(Help) as asked:
        read_line(argv)
    return asked.value.text


def test_the_help_lists_every_command_word_the_options_and_the_exit_codes() -> None:
    text = help_of(["--help"])
    assert text.startswith("usage: alma-ctl [-h] [--root DIR] [--json] COMMAND ...\n")
    for command in CLI_COMMANDS:
        group, _dot, leaf = command.name.rpartition(".")
        if group and group not in COMMANDS:  # a group's line names its commands; `alma-ctl
            # GROUP -h` gives their help
            assert re.search(rf"\n    {group}\s[^\n]*\b{leaf}\b", flat_lines(text)), command
            assert flat(command.help) in flat(help_of([group, "-h"])), command
        else:  # a command, or a group's leaf beside the command of the group's name
            assert flat(f"{command.spelling} {command.help}") in flat(text), command
    assert "\n    init " in text and "\npositional arguments:\n  COMMAND\n" in text
    assert "\noptions:\n  -h, --help" in text and "--root DIR" in text and "--json" in text
    assert flat(cli.EXIT_CODES_HELP) in flat(text)


def flat_lines(text: str) -> str:
    """The help with a row's wrapped continuation joined to its row."""
    return re.sub(r"\n {8,}", " ", text)


@pytest.mark.parametrize("command", CLI_COMMANDS, ids=lambda c: c.name)
def test_each_commands_help_lists_its_arguments_and_their_help(command: Command) -> None:
    text = help_of([*command.spelling.split(), "-h"])
    assert text.startswith(f"usage: alma-ctl {command.spelling} [-h]")
    assert flat(command.help) in flat(text)
    for spec in command.args:
        assert f"  {spec.spelling}" in text, spec
        if spec.help:
            assert flat(spec.help) in flat(text), spec
        if spec.choices:
            assert ", ".join(spec.choices) in flat(text), spec
    assert flat(cli.EXIT_CODES_HELP) in flat(text)


def test_the_help_is_of_what_was_read_when_it_came() -> None:
    assert help_of(["-h", "memory", "search"]).startswith("usage: alma-ctl [-h]")
    group = help_of(["memory", "--json", "-h"])
    assert group.startswith("usage: alma-ctl memory [-h] [--root DIR] [--json] COMMAND ...\n")
    assert flat("search semantic search with filters") in flat(group)
    assert "trash" not in group
    # The help wins over what is missing; after `--` it is a word like any other.
    assert help_of(["suggestions", "show", "--help"]).startswith("usage: alma-ctl suggestions show")
    with pytest.raises(UsageError):
        read_line(["suggestions", "show", "--", "--help"])
    assert "--limit N" in help_of(["history", "-h"]) and "default 20" in help_of(["history", "-h"])


def test_a_long_help_is_wrapped_to_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    text = help_of(["backup", "init", "-h"])
    assert max(len(line) for line in text.splitlines()[1:]) <= 58
    assert flat(COMMANDS["backup.init"].help) in flat(text)


@pytest.mark.parametrize(
    "argv", [["status"], ["--help"], ["frobnicate"], ["memory", "search", "q", "--limit=x"]]
)
def test_alma_ctl_starts_without_pathlib_or_the_socket_wrapper(
    tmp_path: Path, argv: list[str]
) -> None:
    # What the lean client is for: keep these out of every start of alma-ctl, its help and its
    # usage errors included (docs/benchmarks.md).
    heavy = ("pathlib", "socket", "selectors")
    code = (
        "import sys\n"
        "from control import ctl\n"
        f"code = ctl.main(['--root', {str(tmp_path / 'ALMA')!r}, *{argv!r}])\n"
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    expected = {"status": 3, "--help": 0}.get(argv[0], 2)
    assert done.stdout.strip().splitlines()[-1] == f"{expected} []"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["chat", "--root", "R"], ("R", None)),
        (["--once", "hola", "chat"], (None, "hola")),
        (["--root=R", "chat", "--once", "-x y"], ("R", "-x y")),
        (["chat", "--once=--root"], (None, "--root")),
    ],
)
def test_alma_chat_reads_its_line(argv: list[str], expected: tuple[str | None, str | None]) -> None:
    from control.chat import _arguments

    assert _arguments(argv) == expected


@pytest.mark.parametrize(
    ("argv", "sentence"),
    [
        (["chat", "--onse", "x"], "unrecognized arguments: --onse x; did you mean '--once'?"),
        (["caht"], "argument COMMAND: 'caht' is not one of chat"),
    ],
)
def test_alma_chat_refuses_in_one_sentence(argv: list[str], sentence: str) -> None:
    from control.chat import _arguments

    with pytest.raises(UsageError) as refused:
        _arguments(argv)
    assert refused.value.sentence.startswith(sentence) and refused.value.prog == "alma chat"


# --------------------------------------------------------------------------- against the table


SAMPLES = json.loads(
    (Path(__file__).parents[1] / "data" / "ctl_lines.json").read_text(encoding="utf-8")
)


def _outcome(argv: list[str]) -> dict[str, object]:
    try:
        line = read_line(list(argv))
    except UsageError as refused:
        return {"usage": {"prog": refused.prog, "sentence": refused.sentence}}
    except Help:
        return {"help": True}
    keys = ("command", "args", "root", "json", "output", "dir", "with_examples")
    return {"line": dict(zip(keys, line._key(), strict=True))}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda sample: " ".join(sample["argv"]))
def test_every_sample_line_reads_as_it_always_has(sample: dict[str, object]) -> None:
    """The samples (tests/data/ctl_lines.json) were read by the hand-written reader argparse
    replaced: every command, required and optional arguments, both spellings of an option,
    global options before and after, places among options and after ``--``; refusals keep
    their program and their sentence (a guess may follow it)."""
    argv = sample["argv"]
    assert isinstance(argv, list)
    got = _outcome(argv)
    if "usage" in sample:
        refused = got.get("usage")
        assert isinstance(refused, dict) and isinstance(sample["usage"], dict), got
        assert refused["prog"] == sample["usage"]["prog"]
        assert str(refused["sentence"]).startswith(sample["usage"]["sentence"])
    else:
        assert got == {k: v for k, v in sample.items() if k != "argv"}


def test_the_samples_cover_every_command() -> None:
    said = {str(sample["line"]["command"]) for sample in SAMPLES if "line" in sample}
    assert {command.name for command in CLI_COMMANDS} | {"None"} <= said


@pytest.mark.parametrize(
    ("argv", "guess"),
    [
        (["statsu"], "did you mean 'stats'?"),
        (["memory", "serch", "año"], "did you mean 'search'?"),
        (["sugestions", "list"], "did you mean 'suggestions'?"),
        (["history", "--limt", "3"], "did you mean '--limit'?"),
        (["status", "--jsn"], "did you mean '--json'?"),
        (["memory", "search", "q", "--ta", "x"], "did you mean '--tag'?"),
        (["backup", "restore", "s", "--too", "/t", "--to", "/u"], "did you mean '--to'?"),
    ],
)
def test_a_mistyped_command_or_option_gets_a_guess(argv: list[str], guess: str) -> None:
    with pytest.raises(UsageError) as refused:
        read_line(argv)
    assert refused.value.sentence.endswith("; " + guess)


@pytest.mark.parametrize("argv", [["zzz"], ["status", "--qqqq"], ["history", "--limit", "x"]])
def test_nothing_close_gets_no_guess(argv: list[str]) -> None:
    with pytest.raises(UsageError) as refused:
        read_line(argv)
    assert "did you mean" not in refused.value.sentence


def test_the_guess_reads_in_the_persons_language() -> None:
    from policies.i18n import language

    with language("es"), pytest.raises(UsageError) as refused:
        read_line(["statsu"])
    assert refused.value.sentence.startswith("argumento COMMAND: opción no válida: 'statsu'")
    assert refused.value.sentence.endswith("; ¿querías decir 'stats'?")
    with language("es"):
        assert "muestra esta ayuda y sale" in help_of(["history", "-h"])


def test_any_table_entry_is_a_command_line_without_hand_edits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What other changes add to the table (a group of its own, a new leaf of a group, a
    plain command) is read and helped from its entry alone."""
    added = {
        "web": Command("web", "the panel", (Arg("open", "bool", help="open the browser"),)),
        "report.days": Command(
            "report.days", "days", (Arg("limit", "int", default=7, min=1, metavar="N"),)
        ),
        "memory.edit": Command(
            "memory.edit",
            "edit a memory",
            (
                Arg("id", "str", required=True, positional=True, metavar="ID"),
                Arg("tags", "list[str]", flag="--tag", metavar="T"),
            ),
        ),
    }
    table = {name: c for name, c in COMMANDS.items() if name != "report"} | added
    monkeypatch.setattr(cli, "COMMANDS", table)
    web = read_line(["web", "--open", "--json"])
    assert web.command is added["web"] and web.args == {"open": True} and web.as_json
    days = read_line(["report", "days", "--limit", "3"])
    assert days.command is added["report.days"] and days.args == {"limit": 3}
    edit = read_line(["memory", "edit", "--tag", "a", "m1", "--tag", "b"])
    assert edit.args == {"id": "m1", "tags": ["a", "b"]}
    assert "open the browser" in help_of(["web", "-h"]) and "--limit N" in help_of(
        ["report", "days", "-h"]
    )

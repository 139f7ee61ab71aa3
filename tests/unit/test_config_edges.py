"""Configuration edges: nested TOML, absurd values, alma.toml, autonomy on."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from actions import safe_read
from actions.safe_read import FileRead, read_config
from actions.tree import Tree
from agent.loop.autonomy import Autonomy
from agent.policy import PolicyHolder
from agent.settings import Settings, load_settings
from policies import limits as L
from policies.config import load_policy
from policies.defaults import DEFAULT_POLICY_TOML
from policies.errors import ConfigError
from policies.layout import RootLayout
from state.suggestions import SuggestionStore

DOCS = Path(__file__).resolve().parents[2] / "docs"
NESTED = "a = " + "[" * 50_000 + "]" * 50_000 + "\n"


@pytest.fixture
def layout(tmp_path: Path) -> RootLayout:
    layout = RootLayout(tmp_path)
    layout.system.mkdir()
    layout.data.mkdir()
    layout.policy_file.write_text(DEFAULT_POLICY_TOML, encoding="utf-8")
    return layout


def test_a_deeply_nested_policy_is_a_config_error_not_a_crash(layout: RootLayout) -> None:
    # tomllib's RecursionError must not escape load_policy: it would kill the daemon on SIGHUP.
    layout.policy_file.write_text(NESTED, encoding="utf-8")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_policy(layout.policy_file, read_config(layout.policy_file))


def test_a_reload_with_a_nested_policy_keeps_the_last_good_one(layout: RootLayout) -> None:
    holder = PolicyHolder(layout)
    good = holder()
    layout.policy_file.write_text(NESTED, encoding="utf-8")
    assert holder.reload() is False
    assert holder() is good
    assert holder.error is not None and "last good policy" in holder.error


def test_an_absurd_settle_seconds_is_refused_naming_the_key(layout: RootLayout) -> None:
    # Accepted, 10**17 would crash the settle timers (OverflowError).
    text = re.sub(
        r"settle_seconds = \d+", "settle_seconds = 100000000000000000", DEFAULT_POLICY_TOML
    )
    layout.policy_file.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"monitor\.settle_seconds"):
        load_policy(layout.policy_file, read_config(layout.policy_file))


def test_a_syntax_error_in_alma_toml_is_one_sentence(layout: RootLayout) -> None:
    # One sentence, not a TOMLDecodeError traceback ending the daemon's start.
    layout.settings_file.write_text("[memory\nenabled = true\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(layout.settings_file)
    assert str(layout.settings_file) in caught.value.message
    assert "not valid TOML" in caught.value.message and "\n" not in caught.value.message
    layout.settings_file.write_text(NESTED, encoding="utf-8")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_settings(layout.settings_file)


def test_the_sample_alma_toml_in_the_docs_keeps_the_defaults(layout: RootLayout) -> None:
    # A sample setting chroma_url = "" would turn the memory store off.
    text = (DOCS / "operations.md").read_text(encoding="utf-8")
    sample = re.search(r"```toml\n(log_level.*?)```", text, re.S)
    assert sample is not None, "docs/operations.md lost its alma.toml sample"
    layout.settings_file.write_text(sample[1], encoding="utf-8")
    loaded, defaults = load_settings(layout.settings_file), Settings()
    assert loaded.memory == defaults.memory and loaded.memory.enabled
    assert (loaded.schedule, loaded.model, loaded.web) == (
        defaults.schedule,
        defaults.model,
        defaults.web,
    )
    layout.settings_file.write_text('[memory]\nchroma_url = ""\n', encoding="utf-8")
    assert load_settings(layout.settings_file).memory.chroma_url is None


def test_autonomy_on_after_level_off_is_on(layout: RootLayout) -> None:
    # `autonomy level off` then `autonomy on` is on, not still off.
    store = SuggestionStore(layout.db_file)
    try:
        autonomy = Autonomy(store, PolicyHolder(layout))
        configured = autonomy.configured
        assert autonomy.set_level("off")["effective"] == "off"
        status = autonomy.on()
        assert status["effective"] == configured and status["lowered_to"] is None
        autonomy.set_level("manual")
        autonomy.off()
        assert autonomy.on()["effective"] == "manual"  # a lowering that is not "off" stays
    finally:
        store.close()


def test_a_policy_saved_with_a_utf8_bom_is_read(layout: RootLayout) -> None:
    # Notepad and some Windows editors save UTF-8 with a byte order mark; refused, the policy
    # would be "not valid TOML ... line 1, column 1", a syntax error nobody can see.
    text = DEFAULT_POLICY_TOML.replace('level = "suggest"', 'level = "manual"')
    layout.policy_file.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert load_policy(layout.policy_file, read_config(layout.policy_file)).level == "manual"


def test_alma_toml_saved_with_a_utf8_bom_is_read(layout: RootLayout) -> None:
    # The BOM must not reach tomllib (a syntax error), and the file is read once, not a second
    # time by pydantic's TOML source.
    layout.settings_file.write_bytes(b"\xef\xbb\xbf[memory]\ncap = 1234\n")
    assert load_settings(layout.settings_file).memory.cap == 1234


def test_alma_toml_is_built_from_the_text_that_was_checked(
    layout: RootLayout, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read twice (once checked, once by pydantic's TOML source), a save between the two would
    # build settings from text nobody checked (or a raw TOMLDecodeError).
    layout.settings_file.write_text("[memory]\ncap = 1234\n", encoding="utf-8")
    real = safe_read.read_file

    def read_then_save(tree: Tree, relpath: str, **kwargs: Any) -> FileRead | None:
        got = real(tree, relpath, **kwargs)
        layout.settings_file.write_text("[memory\n", encoding="utf-8")  # saved mid-edit
        return got

    monkeypatch.setattr(safe_read, "read_file", read_then_save)
    assert load_settings(layout.settings_file).memory.cap == 1234
    assert layout.settings_file.read_text(encoding="utf-8") == "[memory\n"


def _returns_within(seconds: float, call: Callable[[], object]) -> BaseException | None:
    """What ``call`` raised (None if nothing); fails when it has not returned in time."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
            outcome.append(None)
        except BaseException as exc:  # handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, "blocked reading the file"
    return outcome[0]


@pytest.mark.parametrize("which", ["policy", "settings"])
def test_a_fifo_or_a_link_as_a_configuration_is_refused_never_waited_on(
    layout: RootLayout, which: str
) -> None:
    path = layout.policy_file if which == "policy" else layout.settings_file

    def load() -> object:
        if which == "policy":
            return load_policy(path, read_config(path))
        return load_settings(path)

    path.unlink(missing_ok=True)
    os.mkfifo(path)
    raised = _returns_within(10, load)
    assert isinstance(raised, ConfigError) and "not a regular file" in raised.message
    assert str(path) in raised.message
    path.unlink()
    real = layout.root / "elsewhere.toml"
    real.write_text(DEFAULT_POLICY_TOML if which == "policy" else "", encoding="utf-8")
    path.symlink_to(real)
    with pytest.raises(ConfigError, match="not a regular file"):
        load()


def test_a_configuration_is_read_only_up_to_its_bound(layout: RootLayout) -> None:
    with layout.settings_file.open("wb") as f:
        f.truncate(L.CONFIG_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(ConfigError, match=f"larger than {L.CONFIG_BYTES} bytes"):
        load_settings(layout.settings_file)


def test_alma_toml_names_an_unknown_key_plainly(layout: RootLayout) -> None:
    layout.settings_file.write_text("[memory]\ncapp = 5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(layout.settings_file)
    message = caught.value.message
    assert str(layout.settings_file) in message and "key memory.capp: unknown key" in message

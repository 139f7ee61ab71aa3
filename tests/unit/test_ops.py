"""The op parser's fast paths accept exactly what its full checks accept, and build the same ops."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actions import ops
from policies.errors import BadArgumentError
from policies.i18n import language

GOOD = {
    "dev": 2049, "ino": 77, "kind": "file", "size": 5, "mtime_ns": 1_763_850_000_000_000_000,
    "sha256": None, "boot": "b0", "ctime_ns": 1_763_850_000_000_000_001,
}  # fmt: skip
ODD_VALUES = st.one_of(
    st.integers(-2, 3),
    st.booleans(),
    st.none(),
    st.sampled_from(["file", "dir", "symlink", "other", "pipe", "", "ab" * 32]),
    st.floats(allow_nan=False, max_value=5, min_value=-1),
    st.lists(st.integers(0, 1), max_size=1),
)


@st.composite
def identity_dicts(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = dict(GOOD)
    for key in draw(st.lists(st.sampled_from([*GOOD, "extra"]), max_size=3)):
        if draw(st.booleans()) and key in data:
            del data[key]
        else:
            data[key] = draw(ODD_VALUES)
    return data


def outcome(parse: Any, data: Any) -> object:
    try:
        return parse(data)
    except BadArgumentError:
        return "refused"


@pytest.mark.slow  # 3,000 examples
@settings(max_examples=3000, deadline=None)
@given(identity_dicts())
def test_identity_fast_path_agrees_with_the_full_checks(data: dict[str, Any]) -> None:
    assert outcome(ops.identity_from_dict, data) == outcome(ops._identity_checked, data)


class NotADict(dict[str, Any]):
    """A mapping that is not exactly ``dict``: always parsed by the full checks."""


@settings(max_examples=1500, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["op", "src", "dst", "expect", "path"]),
        st.one_of(st.sampled_from(["move", "user/a", ""]), st.none(), st.integers(0, 2)),
    ),
    st.one_of(st.none(), identity_dicts()),
)
def test_move_fast_path_agrees_with_the_full_checks(data: dict[str, Any], expect: Any) -> None:
    data = {"op": "move", **data}
    if "expect" in data:
        data["expect"] = expect
    assert outcome(ops.op_from_dict, data) == outcome(ops.op_from_dict, NotADict(data))


def test_the_fast_paths_are_taken_and_round_trip() -> None:
    move = ops.Move("user/a.jpg", "user/img/a.jpg", ops.identity_from_dict(GOOD))
    assert ops.op_from_dict(move.to_dict()) == move
    assert ops.identity_from_dict(GOOD).to_dict() == GOOD
    with pytest.raises(BadArgumentError, match="non-negative"):
        ops.identity_from_dict({**GOOD, "size": -1})


def test_the_inverse_of_a_move_is_the_same_by_either_path() -> None:
    from actions.inverse import inverse_plan

    post = {**GOOD, "ctime_ns": GOOD["ctime_ns"] + 7}
    rows = [
        ({"op": "mkdir", "path": "user/img"}, None, {}),
        ({"op": "move", "src": "user/a.jpg", "dst": "user/img/a.jpg", "expect": GOOD}, post, {}),
        ({"op": "move", "src": "user/b.jpg", "dst": "user/img/b.jpg"}, post, {}),
    ]
    slow = [x for op, p, aux in reversed(rows) for x in ops.op_from_dict(op).inverse(p, aux)]
    assert inverse_plan(rows) == slow
    assert slow[0] == ops.Move("user/img/b.jpg", "user/b.jpg", ops.identity_from_dict(post))
    damaged = [({"op": "move", "src": "user/a", "dst": "user/b", "surprise": 1}, post, {})]
    with pytest.raises(BadArgumentError):
        inverse_plan(damaged)


PATH_PIECES = st.sampled_from(
    ["user", "a", "ñandú", "fotos de año", ".", "..", "", ".a", "a.", "...", "\n", "\x7f",
     "\ud800", "\x00", "\xa0", "\u2028", "x" * 60, "é" * 130, "/", "//", "z" * 256]
)  # fmt: skip


def split_outcome(split: Any, relpath: str) -> object:
    from policies.errors import RefusedError

    try:
        return split(relpath)
    except RefusedError:
        return "refused"


@settings(max_examples=1500, deadline=None)
@given(st.one_of(st.lists(PATH_PIECES, max_size=6).map("".join), st.text(max_size=300)))
def test_path_split_fast_path_agrees_with_the_full_check(relpath: str) -> None:
    from actions import safefs

    fast = split_outcome(safefs.split_relpath_cached, relpath)
    assert fast == split_outcome(safefs._split_checked, relpath)
    # And a path the fast check lets through is one every name check accepts.
    if safefs._plain(relpath):
        assert fast != "refused"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    """Arrays as the journal and the suggestion store write them, then maybe damaged."""
    import json

    value = draw(st.one_of(st.lists(JSON_VALUES, max_size=4), JSON_VALUES))
    text = draw(st.sampled_from([
        json.dumps(value), json.dumps(value, indent=1), json.dumps(value, separators=(",", ":")),
    ]))  # fmt: skip
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        text = (
            text[:at]
            + draw(st.sampled_from(["", ",", "]", "[", " ", "x", '"']))
            + text[at + draw(st.integers(0, 2)) :]
        )
    return text


@settings(max_examples=800, deadline=None)
@given(json_texts())
def test_the_stored_plan_is_decoded_item_by_item_exactly_as_json_would(text: str) -> None:
    import json

    try:
        whole = json.loads(text)
    except ValueError:
        whole = "refused"
    if not isinstance(whole, list):
        whole = "refused"
    try:
        items: object = list(ops.iter_json_array(text))
    except ValueError:
        items = "refused"
    assert items == whole


def test_a_damaged_stored_plan_is_one_sentence() -> None:
    damaged = '[\n{"op":"mkdir","path":"user/a"},\n{"op":"mkd'
    with pytest.raises(BadArgumentError, match="not valid JSON") as err:
        ops.plan_from_json(damaged)
    assert "char" not in str(err.value)  # json's detail goes to the log, not to the person
    with language("es"), pytest.raises(BadArgumentError) as es:
        ops.plan_from_json(damaged)
    assert "JSON válido" in str(es.value) and "char" not in str(es.value), str(es.value)
    with pytest.raises(BadArgumentError, match="not valid JSON"):
        list(ops.iter_plan_items(damaged))  # the same reading, for showing a plan as stored
    assert list(ops.iter_plan_items('[{"op": "mkdir", "path": "user/a"}]')) == [
        {"op": "mkdir", "path": "user/a"}
    ]
    plan = [ops.Mkdir("user/a"), ops.Move("user/b", "user/a/b", ops.identity_from_dict(GOOD))]
    import json

    assert ops.plan_from_json(json.dumps(ops.plan_to_list(plan), indent=2)) == plan


@pytest.mark.parametrize("name", ["..", ".", "", "a\nb", "\ud800", "x" * 256, "a\x7f"])
def test_tree_parent_still_checks_the_last_name_in_a_folder_seen_before(
    tmp_path: Path, name: str
) -> None:
    from actions.tree import Tree
    from policies.errors import RefusedError

    (tmp_path / "user").mkdir()
    with Tree(tmp_path) as tree:
        assert tree.parent("user/a.txt")[1] == "a.txt"  # the folder's fd is cached now
        with pytest.raises(RefusedError):
            tree.parent(f"user/{name}")
        assert tree.parent("user/ñandú.txt")[1] == "ñandú.txt"


_ints = st.integers(min_value=0, max_value=2**64)
_texts = st.text()  # any code point: quotes, backslashes, controls, accents, lone surrogates
_identities = st.builds(
    ops.Identity,
    dev=_ints,
    ino=_ints,
    kind=st.sampled_from(["file", "dir", "symlink", "other"]),
    size=_ints,
    mtime_ns=_ints,
    sha256=st.none() | _texts,
    boot=st.none() | _texts,
    ctime_ns=st.none() | _ints,
)


@given(src=_texts, dst=_texts, expect=st.none() | _identities)
@settings(max_examples=300)
def test_move_json_is_the_generic_encoding(src: str, dst: str, expect: ops.Identity | None) -> None:
    """A move's JSON, written directly for speed, is exactly its dict in the compact encoding
    every other op uses, and reads back as the same op."""
    move = ops.Move(src, dst, expect)
    assert move.to_json() == ops.dumps_compact(move.to_dict())
    assert ops.Op.to_json(move) == move.to_json()


def test_move_json_of_a_spanish_name() -> None:
    move = ops.Move(
        'user/año "2025"/ñandú\\.jpg',
        "user/fotos/ñandú.jpg",
        ops.Identity(2049, 7, "file", 3, 10, None, "b-1", 11),
    )
    text = move.to_json()
    assert "año" in text  # kept as is, not \\u escapes
    assert ops.op_from_dict(json.loads(text)) == move

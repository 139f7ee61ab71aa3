"""Preparing the portable bundle again only adds what changed (docs/portable.md): which pinned
wheels the bundle already serves for a Python, and which files it drops."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

PREPARE = Path(__file__).resolve().parents[2] / "portable" / "prepare.py"


@pytest.fixture(scope="module")
def prepare() -> ModuleType:
    spec = importlib.util.spec_from_file_location("portable_prepare", PREPARE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _wheels(folder: Path, *names: str) -> Path:
    folder.mkdir(exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"")
    return folder


def test_only_the_wheels_a_python_lacks_ask_the_registry(
    prepare: ModuleType, tmp_path: Path
) -> None:
    wheels = _wheels(
        tmp_path / "wheels",
        "numpy-2.0.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "tokenizers-0.22.1-cp39-abi3-manylinux_2_17_x86_64.whl",
        "rich-14.0.0-py3-none-any.whl",
        # Too new a C library for the bundle's hosts: it serves no one.
        "orjson-3.11.0-cp311-cp311-manylinux_2_34_x86_64.whl",
    )
    pins = ["numpy==2.0.0", "tokenizers==0.22.1", "rich==14.0.0", "orjson==3.11.0"]
    assert prepare.missing(pins, wheels, "3.11") == ["orjson==3.11.0"]
    assert prepare.missing(pins, wheels, "3.13") == ["numpy==2.0.0", "orjson==3.11.0"]
    # Another version of a package the bundle holds is still missing.
    assert prepare.missing(["rich==14.1.0"], wheels, "3.11") == ["rich==14.1.0"]


def test_a_wheel_no_longer_needed_is_dropped_and_the_rest_kept(
    prepare: ModuleType, tmp_path: Path
) -> None:
    wheels = _wheels(
        tmp_path / "wheels",
        "rich-13.9.0-py3-none-any.whl",
        "rich-14.0.0-py3-none-any.whl",
        "typing_extensions-4.16.0-py3-none-any.whl",
        "Gone_Package-1.0-py3-none-any.whl",
    )
    dropped = prepare.prune(wheels, {"rich": "14.0.0", "typing-extensions": "4.16.0"})
    assert dropped == ["Gone_Package-1.0-py3-none-any.whl", "rich-13.9.0-py3-none-any.whl"]
    assert sorted(p.name for p in wheels.iterdir()) == [
        "rich-14.0.0-py3-none-any.whl",
        "typing_extensions-4.16.0-py3-none-any.whl",
    ]


def test_the_project_wheel_is_built_from_the_tree_as_git_sees_it(
    prepare: ModuleType, tmp_path: Path
) -> None:
    tree, copy = tmp_path / "tree", tmp_path / "copy"
    tree.mkdir()
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tree / ".gitignore").write_text("build/\n")
    (tree / "agent").mkdir()
    (tree / "agent" / "kept.py").write_text("")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "tree"], check=True)
    (tree / "agent" / "new.py").write_text("")  # not committed yet: part of the tree
    # A module deleted since an earlier build, left in setuptools' build folder.
    (tree / "build" / "lib" / "agent").mkdir(parents=True)
    (tree / "build" / "lib" / "agent" / "gone.py").write_text("")
    prepare._source(tree, copy)
    found = sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file())
    assert found == [".gitignore", "agent/kept.py", "agent/new.py"]

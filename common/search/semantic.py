"""The semantic ranker's model: a static word-embedding table shipped with invcrawl
(``common/search/model/static.npz``, distilled from all-MiniLM-L6-v2 by
``bench/tools/distill_static.py``; its licence in ``model/NOTICE``).

A text's vector is the mean of its words' rows (a word the table lacks: the mean of its
WordPiece pieces' rows), normalised; two texts are as close as their vectors' cosine.
No network, no transformer at run time: numpy only, imported when a search first needs
the model. Where numpy or the table is missing, :func:`load` says why once
(:func:`unavailable`) and search answers with its lexical ranker alone.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from invcrawl.common.search import terms as t
from invcrawl.common.search import wordpiece

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

MODEL_FILE = "static.npz"
NEIGHBOURS = 3  # words close to each query word looked up too
MIN_NEIGHBOUR = 0.62  # cosine of a neighbour to the word, at least
WORD_CACHE = 1 << 15  # words whose vector embed_many keeps (16 MB at most)
_lock = threading.Lock()
_loaded: list[StaticModel | None] = []
_why: list[str] = []


class StaticModel:
    """The table: ``words`` (whole words and WordPiece pieces) and their unit vectors."""

    def __init__(self, words: Sequence[str], vectors: np.ndarray) -> None:
        import numpy as np  # noqa: PLC0415 - numpy only when the model is used

        self._np = np
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}
        self._longest = max((len(w) for w in self.words), default=0)  # "##" included
        self.vectors = vectors  # float32, rows of unit length
        # words a query may be expanded with: whole alphabetic words, not pieces
        self._whole_rows = np.array(
            [n for n, w in enumerate(self.words) if w.isalpha() and len(w) >= 3]
        )
        self._rows = lru_cache(maxsize=1 << 15)(self._word_rows)
        self._word_ids: dict[str, int] = {}  # a word -> its row of _word_table (embed_many)
        self._word_table = np.zeros((1024, self.dims), dtype=np.float32)
        self._words_held = 0

    @property
    def np(self) -> Any:
        """numpy, as the model imported it."""
        return self._np

    @property
    def dims(self) -> int:
        return int(self.vectors.shape[1])

    def _word_rows(self, word: str) -> tuple[int, ...]:
        row = self.index.get(word)
        if row is not None:
            return (row,)
        return tuple(self.index[p] for p in wordpiece.pieces(word, self.index, self._longest))

    def embed(self, words: Sequence[str], weights: Sequence[float] | None = None) -> Any:
        """The unit vector of ``words`` (lower-cased), each weighed; None for no word
        the table knows."""
        np = self._np
        rows: list[int] = []
        scale: list[float] = []
        for n, word in enumerate(words):
            found = self._rows(word)
            if found:
                rows.extend(found)
                w = 1.0 if weights is None else weights[n]
                scale.extend([w / len(found)] * len(found))
        if not rows:
            return None
        vector = np.asarray(scale, dtype=np.float32) @ self.vectors[rows]
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else None

    def embed_many(self, texts: Sequence[Sequence[str]]) -> list[Any]:
        """The unit vectors of several texts (lists of words), in one pass of numpy
        (None for a text with no word the table knows): a search embeds its candidates
        so, and a consumer the items of each page it commits (the vector log), a few
        microseconds each. Each word is looked up once a process (up to WORD_CACHE
        words): the mean of its rows, one row of a table of words, the new words of a
        call added in one product."""
        np = self._np
        if self._words_held >= WORD_CACHE:  # (between calls: no id of this call is lost)
            self._word_ids.clear()
            self._words_held = 0
        ids_of, word_ids, rows_of = self._word_ids.get, self._word_ids, self._rows
        ids: list[int] = []
        starts: list[int] = []
        new: list[tuple[int, ...]] = []  # the rows of each word new to the table
        held = self._words_held
        for words in texts:
            starts.append(len(ids))
            for word in words:
                at = ids_of(word)
                if at is None:
                    found = rows_of(word)
                    at = word_ids[word] = held + len(new) if found else -1
                    if found:
                        new.append(found)
                if at >= 0:  # a word of no known piece adds nothing
                    ids.append(at)
        if new:
            self._add_words(new)
        if not ids:
            return [None] * len(texts)
        ends = [*starts[1:], len(ids)]
        nonempty = [n for n in range(len(texts)) if ends[n] > starts[n]]
        sums = np.add.reduceat(self._word_table[ids], [starts[n] for n in nonempty], axis=0)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        sums = sums / np.where(norms > 0, norms, 1.0)
        out: list[Any] = [None] * len(texts)
        for at, n in enumerate(nonempty):
            out[n] = sums[at]
        return out

    def _add_words(self, new: Sequence[tuple[int, ...]]) -> None:
        """The rows of words new to the table of words: the mean of each one's rows."""
        np = self._np
        held = self._words_held
        need = held + len(new)
        if need > self._word_table.shape[0]:  # room for twice as many
            grown = np.zeros((max(need, 2 * held), self.dims), dtype=np.float32)
            grown[:held] = self._word_table[:held]
            self._word_table = grown
        rows = [row for found in new for row in found]
        counts = np.array([len(found) for found in new], dtype=np.float32)
        starts = np.concatenate([[0], np.cumsum(counts[:-1])]).astype(np.int64)
        sums = np.add.reduceat(self.vectors[rows], starts, axis=0)
        self._word_table[held:need] = sums / counts[:, None]
        self._words_held = need

    def embed_text(self, text: str) -> Any:
        return self.embed(t.words(text))

    def similarities(self, query: Any, vectors: Sequence[Any]) -> list[float]:
        """Cosine of ``query`` to each of ``vectors`` (0 for None)."""
        return [0.0 if v is None else float(query @ v) for v in vectors]

    def neighbours(self, word: str, most: int = NEIGHBOURS) -> dict[str, float]:
        """Whole words nearest ``word`` in meaning (cosine at least MIN_NEIGHBOUR), the
        word itself and its own stem left out."""
        return self.neighbours_of([word], most).get(word, {})

    def neighbours_of(
        self, words: Sequence[str], most: int = NEIGHBOURS
    ) -> dict[str, dict[str, float]]:
        """:meth:`neighbours` of several words, in one product with the table."""
        np = self._np
        known = [(w, v) for w in words if (v := self.embed([w])) is not None]
        if not known:
            return {}
        sims = self.vectors[self._whole_rows] @ np.stack([v for _, v in known], axis=1)
        out: dict[str, dict[str, float]] = {}
        take = min(most * 4, len(self._whole_rows))
        for col, (word, _) in enumerate(known):
            column = sims[:, col]
            best = np.argpartition(-column, take - 1)[:take]
            mine: dict[str, float] = {}
            stem = t.stem(word)
            for at in sorted(best.tolist(), key=lambda i: -column[i]):
                candidate = self.words[int(self._whole_rows[at])]
                similarity = float(column[at])
                if similarity < MIN_NEIGHBOUR or len(mine) >= most:
                    break
                if candidate in t.STOPWORDS or t.stem(candidate) == stem:
                    continue
                mine[candidate] = similarity
            out[word] = mine
        return out


def item_words(name: str, summary: str) -> list[str]:
    """The words an item's vector is made of: its name's tokens and its summary's."""
    return [*t.name_tokens(name), *t.words(summary)]


def load() -> StaticModel | None:
    """The shipped model, loaded once a process; None (logged once) without numpy or
    the table."""
    with _lock:
        if _loaded:
            return _loaded[0]
        model: StaticModel | None = None
        try:
            import numpy as np  # noqa: PLC0415 - numpy only when the model is used

            path = resources.files("invcrawl.common.search").joinpath("model", MODEL_FILE)
            with resources.as_file(path) as file, np.load(file) as data:
                words = str(data["words"]).split("\n")
                vectors = data["vectors"].astype(np.float32)
                vectors *= data["scales"].astype(np.float32)[:, None]
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-9
            model = StaticModel(words, vectors)
        except ImportError:
            _why.append("numpy is not installed: search ranks by words only")
        except (OSError, KeyError, ValueError) as exc:
            _why.append(f"no semantic model ({MODEL_FILE}: {exc}): search ranks by words only")
        if _why:
            log.warning("%s", _why[0])
        _loaded.append(model)
        return model


def unavailable() -> str:
    """Why the semantic ranker is off ('' when it is on, or not loaded yet)."""
    return _why[0] if _why else ""


def rankers() -> list[str]:
    """The rankers search runs in this process: ``lexical``, and ``semantic`` when the
    model loads."""
    return ["lexical", "semantic"] if load() is not None else ["lexical"]


def shipped_rankers() -> list[str]:
    """:func:`rankers` without loading the table (``status``, ``list_projects``): numpy
    importable and the table installed."""
    if _loaded:
        return rankers()
    import importlib.util  # noqa: PLC0415 - status only

    path = resources.files("invcrawl.common.search").joinpath("model", MODEL_FILE)
    if importlib.util.find_spec("numpy") is not None and path.is_file():
        return ["lexical", "semantic"]
    return ["lexical"]


def disable_for_tests(off: bool) -> None:
    """Run without the model (True) or load it again (False): the tests' control."""
    with _lock:
        _loaded.clear()
        _why.clear()
        if off:
            _loaded.append(None)
            _why.append("semantic model disabled")

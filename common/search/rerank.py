"""The transformer re-ranker (issue 48): a question's first RERANK_K results by words
and meaning re-ordered by the cosine of all-MiniLM-L6-v2's sentence vector of the
question to each candidate's (``common/search/transformer.py``), blended with the
engine's own score. Name tiers are never re-ranked, nor a name-like query's results.

Its weights ship with invcrawl (``model/encoder.npz``; ``$INVCRAWL_RERANK_MODEL`` names
others, ``common/search/transformer.py``); it runs where the caller asks for it (the MCP
server, which answers many questions in one process; not a one-shot command, which
would load 90 MB at every call). Without numpy or the weights, search ranks as before
and says which rankers it ran (``rankers``). Each text's vector is kept in the process (an
LRU of CACHE_TEXTS by the text embedded, which is what the vector depends on), so a warm
server pays only for candidates it has not seen.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from invcrawl.common.search import transformer

log = logging.getLogger(__name__)

RERANK_K = 20  # results by words re-ranked, the best first by the engine's order
WEIGHT = 2.0  # of the cosine, against the engine's score scaled to the head's best
CACHE_TEXTS = 20_000  # vectors kept (384 float32 each: ~30 MB)
NAME = "transformer"  # as ``rankers`` lists it
_lock = threading.Lock()
_loaded: list[Reranker | None] = []
_why: list[str] = []


def candidate_text(name: str, summary: str) -> str:
    """What a candidate is embedded from: its name and its first sentence."""
    return f"{name}: {summary}" if summary else name


class Reranker:
    """Sentence vectors of queries and candidates, cached; :meth:`similarities`."""

    def __init__(self, model: transformer.Transformer) -> None:
        self.model = model
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.embedded = 0  # texts the model ran on (a cache miss each)

    def vectors(self, texts: Sequence[str]) -> list[Any]:
        with self._cache_lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        fresh = self.model.embed(missing) if missing else []
        with self._cache_lock:
            for text, vector in zip(missing, fresh, strict=True):
                self._cache[text] = vector
            out = []
            for text in texts:
                self._cache.move_to_end(text)
                out.append(self._cache[text])
            while len(self._cache) > CACHE_TEXTS:
                self._cache.popitem(last=False)
            self.embedded += len(missing)
        return out

    def similarities(self, query: str, texts: Sequence[str]) -> list[float]:
        """The cosine of ``query``'s vector to each text's."""
        if not texts:
            return []
        found = self.vectors([query, *texts])
        np = self.model.np
        return [float(v) for v in np.stack(found[1:]) @ found[0]]


def load() -> Reranker | None:
    """The re-ranker, loaded once a process (~1 s: 90 MB of weights); None (logged once)
    without numpy or the weights."""
    with _lock:
        if _loaded:
            return _loaded[0]
        reranker: Reranker | None = None
        path = transformer.model_path()
        if path is None:
            _why.append(
                f"no transformer re-ranker (no weights at ${transformer.MODEL_ENV} or "
                "model/encoder.npz): search ranks without it"
            )
        else:
            try:
                reranker = Reranker(transformer.Transformer.load(path))
            except ImportError:
                _why.append("numpy is not installed: no transformer re-ranker")
            except (OSError, KeyError, ValueError) as exc:
                _why.append(f"no transformer re-ranker ({path}: {exc})")
        if _why:
            log.warning("%s", _why[0])
        _loaded.append(reranker)
        return reranker


def unavailable() -> str:
    """Why the re-ranker is off ('' when it is on, or not loaded yet)."""
    return _why[0] if _why else ""


def installed() -> bool:
    """Whether :func:`load` would find weights (``status``, ``list_projects``), without
    loading them."""
    if _loaded:
        return _loaded[0] is not None
    import importlib.util  # noqa: PLC0415 - status only

    return importlib.util.find_spec("numpy") is not None and transformer.model_path() is not None


def disable_for_tests(off: bool) -> None:
    """Run without the re-ranker (True) or look for it again (False): the tests' control."""
    with _lock:
        _loaded.clear()
        _why.clear()
        if off:
            _loaded.append(None)
            _why.append("transformer re-ranker disabled")

"""BERT's WordPiece split of a word (pure, no dependency): the greedy longest match of
the uncased vocabulary, continuation pieces written ``##piece``. The static embedding
table (``common/search/semantic.py``) gives a word its own row when it has one, else the
mean of its pieces' rows, as the transformer it was distilled from would see them."""

from __future__ import annotations

from collections.abc import Container

MAX_WORD_CHARS = 48  # longer words are one unknown token, as BERT's tokenizer does


def pieces(word: str, vocab: Container[str], longest: int = MAX_WORD_CHARS) -> list[str]:
    """The WordPiece pieces of a lower-cased word ([] when some part of it has no piece:
    BERT's [UNK]); ``longest``: the characters of the vocabulary's longest entry (no
    longer piece is looked up: the same pieces, fewer tries)."""
    if len(word) > MAX_WORD_CHARS:
        return []
    out: list[str] = []
    start = 0
    while start < len(word):
        end = min(len(word), start + longest)
        found = None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                found = piece
                break
            end -= 1
        if found is None:
            return []
        out.append(found)
        start = end
    return out

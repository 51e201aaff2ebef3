"""Plain ``doc`` text of entry bodies, each section's text computed once per page.

``doc`` is the whitespace-normalised text of a body: ``norm(raw_text(section))`` for a label,
``norm(raw_text(main))`` for std:doc. Sections nest (std:doc ⊃ section ⊃ subsection, each with
its own label), so normalising every body on its own is O(page × depth). Instead the
normalised text of a requested section (or main) is composed from its children's normalised
texts, reusing the memo for child sections; everything else is one libxml2 text call.

Composition is exact: splitting ``a + b`` on whitespace gives the tokens of ``a`` and ``b``,
except that the last token of ``a`` and the first of ``b`` merge when there is no whitespace
between them. So a piece is ``(normalised text, starts with whitespace, ends with whitespace)``
and pieces are joined with one space or none accordingly.
"""

from __future__ import annotations

from invcrawl.common.rope import Text, join

from .text import Element, raw_text

# (normalised text, leading whitespace, trailing whitespace); whitespace-only text is
# ("", True, True), empty text ("", False, False). A long composed text is a rope of its
# pieces (``common/rope.py``): a section's text is not copied into each section around it.
Piece = tuple[Text, bool, bool]

_EMPTY: Piece = ("", False, False)
_SPACE: Piece = ("", True, True)


def piece(s: str) -> Piece:
    if not s:
        return _EMPTY
    if s.isspace():
        return _SPACE
    return " ".join(s.split()), s[0].isspace(), s[-1].isspace()


def compose(pieces: list[Piece]) -> Piece:
    out: list[Text] = []
    space = False  # whitespace seen since the last non-empty piece
    lead = False
    for text, first_ws, last_ws in pieces:
        if not text:
            if first_ws:
                space = True
            continue
        if out:
            if space or first_ws:
                out.append(" ")
        else:
            lead = space or first_ws
        out.append(text)
        space = last_ws
    if not out:
        return ("", space, space)
    return join(out), lead, space


class DocText:
    """Per-page ``doc`` builder. ``members``/``has_members`` as in ``page.Page``."""

    def __init__(self, main: Element, members: set[Element], has_members: set[Element]) -> None:
        self.main = main
        self.members = members
        self.has_members = has_members
        self._full: dict[Element, Piece] = {}
        self._excl: dict[Element, Piece] = {}
        # Elements whose text is composed from their children: the ancestors of requested
        # sections (so an outer section or main reuses the inner one's text).
        self._compose: set[Element] = set()
        # Elements whose text leaves out some of theirs (``leave_out``): theirs is not
        # ``norm(raw_text(el))``.
        self._altered: set[Element] = set()

    def request(self, el: Element) -> None:
        """``el`` (a section or main) is the body of some entry: its ancestors up to main are
        composed from their children, so that they reuse its text (``el`` itself is one libxml2
        call unless it holds another requested element)."""
        compose_set = self._compose
        if el is self.main:
            return
        el = el.getparent()
        while el is not None and el not in compose_set:
            compose_set.add(el)
            if el is self.main:
                break
            el = el.getparent()

    def leave_out(self, el: Element) -> None:
        """``el``'s text is no part of any doc (mkdocstrings' column headings of a section
        table: "Name Type Description Default"): its ancestors are composed from their
        children, so that their text leaves it out too."""
        self._full[el] = _EMPTY
        self._excl[el] = _EMPTY
        self.request(el)
        node = el
        while node is not None and node not in self._altered:
            self._altered.add(node)
            node = node.getparent()

    def holds(self, el: Element) -> bool:
        """``el`` holds an element ``request``ed (its text is composed)."""
        return el in self._compose

    def plain(self, el: Element) -> Text | None:
        """``norm(raw_text(el))``, composed from the texts inside it as ``full``; None
        when some of its text is left out (``leave_out``)."""
        return None if el in self._altered else self.full(el)[0]

    def doc(self, items: list[Element | str], exclude: bool) -> Text:
        pieces: list[Piece] = []
        for item in items:
            if isinstance(item, str):
                pieces.append(piece(item))
            else:
                # Sibling blocks are not always separated by whitespace in the source
                # (CPython C-API dds: "<em>…</em><p>…"); libxml2's text output would glue them.
                pieces.append(_SPACE)
                pieces.append(self._excluding(item) if exclude else self.full(item))
                pieces.append(_SPACE)
        return compose(pieces)[0]

    def dd_doc(self, dd: Element, exclude: bool) -> Text:
        """``doc(children_items(dd), exclude)``: the children separated by line breaks.

        When the dd's own text and its children's tails are blank (Sphinx writes a newline after
        every block) the breaks change nothing, and the dd's text is one libxml2 call.
        """
        if not (exclude and dd in self.has_members) and _blank_between(dd):
            return self.full(dd)[0]
        items: list[Element | str] = [dd.text] if dd.text else []
        for child in dd:
            items.append(child)
            if child.tail:
                items.append(child.tail)
        return self.doc(items, exclude)

    def full(self, el: Element) -> Piece:
        """Pieces of ``raw_text(el)``."""
        cached = self._full.get(el)
        if cached is None:
            if el in self._compose:
                pieces = [piece(el.text)] if el.text else []
                for child in el:
                    if isinstance(child.tag, str):
                        pieces.append(self.full(child))
                    if child.tail:
                        pieces.append(piece(child.tail))
                cached = compose(pieces)
            else:
                cached = piece(raw_text(el))
            self._full[el] = cached
        return cached

    def _excluding(self, el: Element) -> Piece:
        """Text without nested member descriptions; a line break before each child element."""
        if el in self.members:
            return _EMPTY
        if el not in self.has_members:
            return self.full(el)
        cached = self._excl.get(el)
        if cached is None:
            pieces = [piece(el.text)] if el.text else []
            for child in el:
                if isinstance(child.tag, str):
                    pieces.append(_SPACE)
                    pieces.append(self._excluding(child))
                if child.tail:
                    pieces.append(piece(child.tail))
            cached = self._excl[el] = compose(pieces)
        return cached


def _blank_between(el: Element) -> bool:
    """True when ``el``'s text is blank and whitespace separates its (element) children."""
    text = el.text
    if text and not text.isspace():
        return False
    last = len(el) - 1
    for i, child in enumerate(el):
        if not isinstance(child.tag, str):
            return False
        tail = child.tail
        if tail:
            if not tail.isspace():
                return False
        elif i != last:
            return False
    return True

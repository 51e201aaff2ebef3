"""How work grows with the size of a site's input, counted, never timed (a count does not
change beside a CPU hog): the Python lines a call executes (``sys.settrace``), and
comparisons and hashes of strings (:class:`CountedStr`), which C code such as ``x in
list`` makes without running a line of Python. A test runs the work at a size and at
twice that size and checks the count about doubles (near-linear), not quadruples."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any


class CountedStr(str):
    """A string whose comparisons and hashes run a line of Python each, so that
    :func:`lines_run` counts them too; ``lstrip`` keeps the type (names are stripped of
    their stars before they are compared)."""

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return str.__ne__(self, other)

    def __hash__(self) -> int:
        return str.__hash__(self)

    def lstrip(self, chars: str | None = None) -> CountedStr:
        return CountedStr(str.lstrip(self, chars))


def lines_run(work: Callable[[], Any]) -> int:
    """The lines of Python ``work()`` executes (its callees' included)."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local

    before = sys.gettrace()
    sys.settrace(calls)
    try:
        work()
    finally:
        sys.settrace(before)
    return count


def growth(work_at: Callable[[int], Callable[[], Any]], size: int) -> float:
    """How many times more lines the work of twice ``size`` runs than that of ``size``
    (2 when linear, 4 when quadratic). ``work_at(n)``: the work at size n, its input
    built beforehand (not counted)."""
    small, large = work_at(size), work_at(2 * size)
    counted = lines_run(small)
    assert counted >= size, f"{counted} lines for size {size}: the work is not counted"
    return lines_run(large) / counted

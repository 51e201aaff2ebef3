"""Bars and the segments they are made of."""

from __future__ import annotations

from typing import Optional, Type, Union, overload


class Segment:
    """One segment of a bar."""

    def __init__(self, width: int) -> None:
        """Make a segment.

        @param width: The segment's width.
        """
        self.width = width


class Bar:
    """A bar of a given size.

    @param size: The bar's size, in cells.
    @param segment: The class of the bar's segments.
    @raise ValueError: When the size is negative.
    """

    def __init__(self, size: int, segment: Optional[Type[Segment]] = None) -> None:
        self.size = size
        self.segment = segment

    def grow(self, by: int = 1) -> int:
        """Grow the bar.

        @param by: How many cells to add.
        @param animate: Animate the growth; documented, not in the signature.
        @return: The new size.
        """
        return self.size + by


def make(size: int, segment: Optional[Type[Segment]] = None) -> Bar:
    """Make a bar.

    @param size: The size of the bar.
    @param segment: The class of its segments.
    @param colour: The bar's colour; documented, not in the signature.
    @return: The bar.
    """
    return Bar(size, segment)


@overload
def pick(value: int) -> int: ...


@overload
def pick(value: str, strict: bool = ...) -> str: ...


def pick(value: Union[int, str], strict: bool = False) -> Union[int, str]:
    """Pick a value.

    @param value: The value to pick.
    @param strict: Refuse values of another type.
    @param fallback: Picked instead; documented, in no signature.
    """
    return value

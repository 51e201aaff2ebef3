"""Shapes: a base class, a subclass that inherits its members, and functions.

Every docstring is Google style; the sections are written by each layout of the site.
"""

from __future__ import annotations

from typing import overload

#: The unit of every length.
UNIT = "cm"


class Shape:
    """A shape with a name.

    Args:
        name: The shape's name.
        sides: How many sides it has.

    Raises:
        ValueError: When sides is negative.
    """

    def __init__(self, name: str, sides: int = 0) -> None:
        self.name = name
        self.sides = sides

    def describe(self, verbose: bool = False) -> str:
        """Describe the shape.

        Args:
            verbose: Say more.

        Returns:
            The description.
        """
        return self.name

    def scale(self, factor: float) -> Shape:
        """Scale the shape.

        Args:
            factor: The scale factor.
            copy: Copy the shape first; documented, not in the signature.

        Returns:
            The scaled shape.

        Raises:
            ValueError: When factor is not positive.
        """
        return self


class Circle(Shape):
    """A round shape.

    Args:
        radius: The radius.
    """

    def __init__(self, radius: float) -> None:
        super().__init__("circle")
        self.radius = radius

    def roll(self, distance: float, *, verify: bool = True) -> float:
        """Roll the circle along a path.

        Args:
            distance: How far to roll.
            verify: Either `True` to check the path first, `False` to roll
                blindly, or a `str` naming a map.

        Returns:
            The distance rolled.
        """
        return distance


def area(shape: Shape, unit: str = "cm") -> float:
    """The area of a shape.

    Args:
        shape: The shape to measure.
        unit: The unit, `"cm"` by default or `"in"`.
        precision: Digits to round to; documented, not in the signature.

    Returns:
        The area in square units.

    Raises:
        TypeError: When shape is no shape.
    """
    return 0.0


def fetch(url: str, *, verify) -> bytes:
    """Fetch a shape's description, its parameters written as plain Markdown.

    **Parameters:**

    * **url** - The URL to fetch.
    * **verify** - *(optional)* Either `True` to use the default bundle, `False` to skip
      the check.
    """
    return b""


@overload
def pick(value: int) -> int: ...


@overload
def pick(value: str, strict: bool = ...) -> str: ...


def pick(value: int | str, strict: bool = False) -> int | str:
    """Pick a value.

    Args:
        value: The value to pick.
        strict: Refuse values of another type.
        fallback: Picked instead; documented, in no signature.
    """
    return value


def noted() -> None:
    """A function whose docstring has consecutive version directives.

    .. versionadded:: 1.0
    .. versionchanged:: 1.1
    .. versionchanged:: 1.2
    .. deprecated:: 2.0
    """

"""Core helpers of the fixture package.

Every symbol here has a known rendering so extraction tests can assert on it.
"""

from typing import overload

#: Default widget size used when none is given.
DEFAULT_SIZE: int = 3


def add(a: int, b: int = 2) -> int:
    """Add two integers and return the sum.

    The operands are not modified.

    :param a: The first operand.
    :param b: The second operand.
    :returns: The sum of both operands.
    :raises OverflowError: If the result does not fit in a machine word.

    .. versionadded:: 1.1
    """
    return a + b


def scale(value: float, factor: float = 1.5, *, clamp: bool = False) -> float:
    """Multiply a value by a factor.

    :param value: The number to scale.
    :param factor: The multiplier.
    :param clamp: Limit the result to the unit interval.
    :returns: The scaled number.

    .. versionchanged:: 1.3
       The clamp keyword was added.
    """
    result = value * factor
    return min(max(result, 0.0), 1.0) if clamp else result


def legacy_sum(values: list) -> int:
    """Sum a list of integers the old way.

    .. deprecated:: 1.4
       Call add in a loop instead.
    """
    return sum(values)


@overload
def convert(value: int) -> str: ...


@overload
def convert(value: str) -> int: ...


def convert(value):
    """Convert between an integer and its decimal text."""
    return str(value) if isinstance(value, int) else int(value)


def configure_everything(alpha: int, beta: str = "b", gamma: float = 0.5,
                         delta: bool = True, epsilon: int = 7) -> dict:
    """Configure every subsystem at once with one very long signature.

    :param alpha: Primary knob.
    :param epsilon: Last knob.
    """
    return {"alpha": alpha, "beta": beta, "gamma": gamma, "delta": delta, "epsilon": epsilon}


class FixtureError(Exception):
    """Raised when a fixture operation cannot be completed."""


class Widget:
    """A rectangular widget with a name and a size.

    Widgets are the main objects of the fixture package.

    :param name: Human readable widget name.
    :param size: Edge length in pixels.
    :raises ValueError: If the size is negative.
    """

    #: Category shared by every widget.
    kind: str = "widget"

    class Config:
        """Settings holder nested inside the widget class."""

        #: Whether the widget is drawn on screen.
        visible: bool = True

    def __init__(self, name: str, size: int = 1) -> None:
        if size < 0:
            raise ValueError(size)
        self.name = name
        self.size = size

    def resize(self, width: int, height: int = 0) -> None:
        """Change the widget dimensions in place.

        :param width: New width in pixels.
        :param height: New height in pixels, zero keeps it square.
        :raises FixtureError: If the widget is frozen.

        .. versionchanged:: 1.2
           Height became optional.
        """
        self.size = width

    @property
    def area(self) -> int:
        """Surface covered by the widget in square pixels."""
        return self.size * self.size

    @classmethod
    def from_pair(cls, name: str, size: int):
        """Build a widget from a name and a size."""
        return cls(name, size)

    @staticmethod
    def validate(size: int) -> bool:
        """Tell whether a size is acceptable."""
        return size >= 0

"""Core helpers of the fixture package, Google style.

Functions, classes and attributes with every kind of parameter.
"""

from __future__ import annotations

import abc
import functools
from typing import Any

DEFAULT_SIZE: int = 3
"""Default widget size used when none is given."""

NAMES: list[str] = ["alpha", "beta"]
"""Names known to the registry."""


def add(a: int, b: int = 2) -> int:
    """Add two integers and return the sum.

    The operands are not modified.

    Args:
        a: The first operand.
        b: The second operand.

    Returns:
        The sum of both operands.

    Raises:
        OverflowError: If the result does not fit in a machine word.
    """
    return a + b


def every_kind(
    source: str, /, target: str, *extra: int, strict: bool = False, retries: int = 3, **options: Any
) -> dict[str, Any]:
    """Take one parameter of every kind.

    Args:
        source: Where the data comes from.
        target: Where the data goes.
        *extra: More numbers.
        strict: Fail on the first problem.
        retries: How many times to try again.
        **options: Passed on to the transport.

    Returns:
        What was done.
    """
    return {"source": source, "target": target}


def no_annotations(x, y=None, *rest, **named):
    """Accept anything, annotated with nothing.

    Args:
        x: The first value.
        y: The second value.
    """
    return x


def keyword_only(*, name: str, count: int = 1) -> list[str]:
    """Repeat a name.

    Args:
        name: The name to repeat.
        count: How many times.

    Returns:
        The repeated names.
    """
    return [name] * count


def read_bytes(path: str, limit: int | None = None) -> bytes:
    """Read a file's bytes.

    Args:
        path: The file to read.
        limit: At most this many bytes.

    Returns:
        The bytes read.

    Raises:
        FileNotFoundError: If the file does not exist.
        PermissionError: If the file cannot be read.
    """
    with open(path, "rb") as f:
        return f.read(limit or -1)


def legacy_sum(values: list[int]) -> int:
    """Sum a list of integers the old way.

    Deprecated:
        Deprecated since version 1.4: call add in a loop instead.

    Args:
        values: The integers to sum.

    Returns:
        The total.
    """
    return sum(values)


def fresh_total(values: list[int], start: int = 0) -> int:
    """Sum integers from a start value.

    Note: Added in version 1.2
        The start parameter came with it.

    Args:
        values: The integers to sum.
        start: The value to start from.

    Returns:
        The total.
    """
    return sum(values, start)


async def fetch_remote(url: str, timeout: float = 10.0) -> bytes:
    """Fetch a URL's body.

    Args:
        url: The address to fetch.
        timeout: Seconds to wait.

    Returns:
        The body.
    """
    return url.encode()


class FixtureError(Exception):
    """Raised when a fixture operation cannot be completed."""


class Base(abc.ABC):
    """An abstract renderable thing."""

    @abc.abstractmethod
    def render(self, indent: int = 0) -> str:
        """Render the thing as text.

        Args:
            indent: Spaces before each line.

        Returns:
            The text.
        """


class Widget(Base):
    """A rectangular widget with a name and a size.

    Widgets are cheap to create.

    Attributes:
        width: The width in pixels.
        height: The height in pixels.
    """

    kind: str = "plain"
    """The kind of every widget of this class."""

    def __init__(self, width: int, height: int = 1) -> None:
        """Make a widget.

        Args:
            width: The width in pixels.
            height: The height in pixels.
        """
        self.width = width
        self.height = height
        self._label = "widget"

    def area(self) -> int:
        """The widget's area in square pixels.

        Returns:
            Width times height.
        """
        return self.width * self.height

    def render(self, indent: int = 0) -> str:
        """Render the widget as text.

        Args:
            indent: Spaces before each line.

        Returns:
            The text.
        """
        return " " * indent + f"{self.width}x{self.height}"

    def resize(self, width: int, height: int, *, keep_ratio: bool = False) -> None:
        """Change the widget's size.

        Args:
            width: The new width.
            height: The new height.
            keep_ratio: Keep the ratio of width to height.

        Raises:
            ValueError: If a size is negative.
        """
        if width < 0 or height < 0:
            raise ValueError("negative size")
        self.width, self.height = width, height

    @property
    def label(self) -> str:
        """The widget's label, writable."""
        return self._label

    @label.setter
    def label(self, value: str) -> None:
        self._label = value

    @property
    def ratio(self) -> float:
        """Width divided by height, read-only."""
        return self.width / self.height

    @functools.cached_property
    def checksum(self) -> str:
        """A checksum of the widget, computed once."""
        return f"{self.width}:{self.height}"

    @classmethod
    def square(cls, size: int = DEFAULT_SIZE) -> Widget:
        """Make a square widget.

        Args:
            size: The side in pixels.

        Returns:
            The new widget.
        """
        return cls(size, size)

    @staticmethod
    def validate(value: int) -> bool:
        """Tell whether a size is valid.

        Args:
            value: The size to check.

        Returns:
            True when the size is positive.
        """
        return value > 0

    async def refresh(self, timeout: float = 1.0) -> None:
        """Redraw the widget.

        Args:
            timeout: Seconds to wait for the screen.
        """

    class Options:
        """Options of a widget, a nested class.

        Attributes:
            border: The border's width.
        """

        border: int = 1
        """The border's width."""

        def merged(self, other: Widget.Options) -> Widget.Options:
            """Merge two sets of options.

            Args:
                other: The options that win.

            Returns:
                The merged options.
            """
            return other

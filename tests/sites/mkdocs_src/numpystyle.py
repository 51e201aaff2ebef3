"""Numpy-style docstrings of the fixture package."""

from __future__ import annotations


def interpolate(x: float, xp: list[float], fp: list[float], *, left: float | None = None) -> float:
    """Interpolate one value linearly.

    Parameters
    ----------
    x : float
        The x-coordinate to evaluate.
    xp : list of float
        The x-coordinates of the data points.
    fp : list of float
        The y-coordinates of the data points.
    left : float, optional
        Value to return below the first point.

    Returns
    -------
    float
        The interpolated value.

    Raises
    ------
    ValueError
        If xp and fp differ in length.
    """
    if len(xp) != len(fp):
        raise ValueError("length")
    return fp[0]


def old_mean(values: list[float]) -> float:
    """Average a list of numbers.

    .. deprecated:: 1.3
        Use statistics.mean instead.

    Parameters
    ----------
    values : list of float
        The numbers.

    Returns
    -------
    float
        The mean.
    """
    return sum(values) / len(values)


class Matrix:
    """A small dense matrix.

    Parameters
    ----------
    rows : int
        Number of rows.
    cols : int
        Number of columns.
    """

    def __init__(self, rows: int, cols: int = 1) -> None:
        self.rows = rows
        self.cols = cols

    def transpose(self) -> Matrix:
        """Swap rows and columns.

        Returns
        -------
        Matrix
            The transposed matrix.
        """
        return Matrix(self.cols, self.rows)

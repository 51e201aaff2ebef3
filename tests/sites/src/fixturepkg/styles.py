"""Docstrings in numpydoc and Google styles, rendered by sphinx.ext.napoleon."""


def numpy_fetch(path: str, retries: int = 3) -> bool:
    """Fetch a resource following numpydoc conventions.

    Parameters
    ----------
    path : str
        Location of the resource.
    retries : int, optional
        How many attempts to make.

    Returns
    -------
    bool
        Whether the fetch succeeded.

    Raises
    ------
    TimeoutError
        If every attempt timed out.
    """
    return bool(path) and retries >= 0


def google_lookup(key: str, default: int = 0) -> int:
    """Look up a key following Google conventions.

    Args:
        key (str): The key to look up.
        default: Value returned when the key is missing.

    Returns:
        int: The stored value.

    Raises:
        KeyError: If the key is empty.
    """
    if not key:
        raise KeyError(key)
    return default


class NumpyPoint:
    """A point whose docstring uses numpydoc sections.

    Parameters
    ----------
    x : float
        Horizontal coordinate.
    y : float
        Vertical coordinate.
    """

    def __init__(self, x: float, y: float) -> None:
        self.x = x
        self.y = y

    def distance(self, other) -> float:
        """Measure the straight line distance to another point.

        Parameters
        ----------
        other : NumpyPoint
            The point to measure to.

        Returns
        -------
        float
            The Euclidean distance.
        """
        return ((self.x - other.x) ** 2 + (self.y - other.y) ** 2) ** 0.5

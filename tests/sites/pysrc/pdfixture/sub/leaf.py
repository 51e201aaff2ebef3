"""
A module at the leaf of the package tree.
"""

__docformat__ = "epytext"

LIMIT = 10
"""The largest number the leaf accepts."""


def grow(amount: int = 1) -> int:
    """
    Grow the leaf.

    @param amount: By how much.
    @return: The new size.
    """
    return amount


class Leaf:
    """
    A leaf of the tree.
    """

    def fall(self) -> None:
        """
        Fall from the tree.
        """

"""Patterns of documentation pages: re-exports, inherited members and sections.

The package re-exports the shapes module's public names.
"""

from mkpat.shapes import Circle, Shape, area

__all__ = ["Circle", "Shape", "area"]

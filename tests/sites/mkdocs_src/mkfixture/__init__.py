"""The mkdocstrings fixture package.

Every symbol below has a known rendering: the tests derive their expectations from these
sources (``ast``), never from the built HTML.
"""

VERSION: str = "1.4"
"""The package's version."""

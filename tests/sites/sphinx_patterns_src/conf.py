"""The Sphinx pattern fixture (tests/sites/sphinx_patterns.py): markup of issue 49, items 8
and 9, as Sphinx and its extensions write it."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "Patterns"
version = release = "1.0"
extensions = ["sphinx.ext.autodoc", "sphinx_paramlinks", "capi_annotations"]
html_theme = "alabaster"

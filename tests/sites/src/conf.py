"""Sphinx configuration of the invcrawl fixture site.

The same sources are built by every combo of tests/sites/build.py; the theme comes from
``-D html_theme=...`` on the command line. Nothing here may depend on the network.
"""

import os
import sys

import sphinx

sys.path.insert(0, os.path.abspath("."))

project = "invcrawl-fixture"
author = "invcrawl"
copyright = "2024, invcrawl"
version = "1.0"
release = "1.0.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]

master_doc = "index"
exclude_patterns = ["_build", "fixturepkg"]
html_theme = "alabaster"
html_static_path = []
autodoc_member_order = "bysource"
# Keep rendered type hints identical across Sphinx versions (all hints are builtins).
autodoc_typehints = "signature"

# Long signatures are wrapped into a nested <dl> inside the <dt> (Sphinx >= 7.1 only).
# 80 characters: only ``fixturepkg.core.configure_everything`` exceeds it.
if sphinx.version_info >= (7, 1):
    python_maximum_signature_line_length = 80


def setup(app):
    # A custom object type, as Sphinx's own docs do. Sphinx >= 7.4 ships a built-in
    # std:confval; override=True replaces it with this one on every version.
    app.add_object_type(
        "confval",
        "confval",
        objname="configuration value",
        indextemplate="pair: %s; configuration value",
        override=True,
    )

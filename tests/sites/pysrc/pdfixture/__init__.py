"""
The pdfixture package: every shape of symbol pydoctor documents, with a known ground truth.

It is documented by pydoctor in the tests (tests/sites/pydoctor_build.py); the oracle reads
these sources with C{ast} (tests/sites/pydoctor_oracle.py).

@since: 0.1
"""

__docformat__ = "epytext"

VERSION = "1.0"
"""The version of the fixture package."""

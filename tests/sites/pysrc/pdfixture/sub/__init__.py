"""
A subpackage of the fixture.
"""

__docformat__ = "epytext"

"""Patterns of pydoctor pages: class docstrings that document the constructor, linked
types, documented names the signature lacks and overloads."""

"""Fixture package documented by the invcrawl test site."""

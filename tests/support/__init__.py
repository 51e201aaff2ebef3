"""Test support: loopback HTTP servers, CLI runners and crawl checks shared by suites."""

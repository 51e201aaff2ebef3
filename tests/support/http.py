"""The loopback static HTTP server (with fault injection) lives in bench/httpserver.py so
that the fault harness and the tests share it."""

from bench.httpserver import StaticServer, flaky, serve

__all__ = ["StaticServer", "flaky", "serve"]

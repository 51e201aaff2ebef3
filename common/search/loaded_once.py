"""A model loaded once a process (the semantic table, the re-ranker's transformer): the
first caller loads it, every later one gets the same value; when it cannot be had, why
is kept and logged once, and search goes on without it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Unavailable(Exception):
    """A loader's one-line reason why its model cannot be had (logged once)."""


class LoadedOnce(Generic[T]):
    """One model's value in this process: loaded at the first :meth:`get`, None when its
    loader raised :class:`Unavailable` (``why`` says what)."""

    def __init__(self, loader: Callable[[], T], log: logging.Logger) -> None:
        self._loader = loader
        self._log = log  # the model's module's: a user's logging config names it
        self._lock = threading.Lock()
        self._loaded: list[T | None] = []
        self._why = ""

    def get(self) -> T | None:
        with self._lock:
            if not self._loaded:
                try:
                    self._loaded.append(self._loader())
                except Unavailable as exc:
                    self._why = str(exc)
                    self._log.warning("%s", self._why)
                    self._loaded.append(None)
            return self._loaded[0]

    @property
    def loaded(self) -> bool:
        """Whether :meth:`get` has run (its value is known without loading)."""
        return bool(self._loaded)

    @property
    def why(self) -> str:
        """Why the model is off ('' when it is on, or not loaded yet)."""
        return self._why

    def disable_for_tests(self, off: bool, why: str) -> None:
        """Run without the model (True: ``why`` said) or load it again (False)."""
        with self._lock:
            self._loaded.clear()
            self._why = why if off else ""
            if off:
                self._loaded.append(None)

"""``inspect.stack()`` without the source lines, and ``inspect.getmodule()`` of a frame
without the file scan, for the imports that call them only to name a frame's module
(Scrapy's ``create_deprecated_class``: ``inspect.getmodule(inspect.stack()[1][0])``,
the module of the deprecated alias).

The real ``stack`` looks up each frame's source file and module: for the frozen import
machinery's frames (several per nested import) that is a scan of ``sys.modules`` each,
~0.2 CPU-s of every Scrapy process's start-up with invcrawl's ~900 modules loaded; the
real ``getmodule``'s first call resolves the real path of every module loaded, ~0.05
more (issue 47, 5). The frames, file names, line numbers and function names are the
same; ``code_context`` and ``index`` are None, as ``inspect.stack(context=0)`` gives
them; a frame's module is the one its globals are (the module being imported)."""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Iterator
from types import FrameType, ModuleType


def stack_frames(context: int = 1) -> list[inspect.FrameInfo]:
    """The caller's stack as ``inspect.stack`` lists it, without reading any source."""
    frames = []
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        frames.append(
            inspect.FrameInfo(frame, code.co_filename, frame.f_lineno, code.co_name, None, None)
        )
        frame = frame.f_back
    return frames


_getmodule = inspect.getmodule


def module_of(object: object, _filename: str | None = None) -> ModuleType | None:
    """``inspect.getmodule``; of a frame, the module its globals are, when loaded."""
    if isinstance(object, FrameType):
        module = sys.modules.get(str(object.f_globals.get("__name__")))
        if module is not None and module.__dict__ is object.f_globals:
            return module
    return _getmodule(object, _filename)


@contextlib.contextmanager
def frames_without_source() -> Iterator[None]:
    """``inspect.stack`` is :func:`stack_frames` and ``inspect.getmodule``
    :func:`module_of` inside (one thread: an import)."""
    stack, getmodule = inspect.stack, inspect.getmodule
    inspect.stack, inspect.getmodule = stack_frames, module_of
    try:
        yield
    finally:
        inspect.stack, inspect.getmodule = stack, getmodule

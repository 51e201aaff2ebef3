"""``inspect.stack()`` without the source lines, for the imports that call it only to
read a frame (Scrapy's ``create_deprecated_class``: ``inspect.stack()[1]``, whose module
names the deprecated alias).

The real one looks up each frame's source file and module: for the frozen import
machinery's frames (several per nested import) that is a scan of ``sys.modules`` each,
~0.2 CPU-s of every Scrapy process's start-up with invcrawl's ~900 modules loaded
(issue 47, 5). The frames, file names, line numbers and function names are the same;
``code_context`` and ``index`` are None, as ``inspect.stack(context=0)`` gives them."""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Iterator
from types import FrameType


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


@contextlib.contextmanager
def frames_without_source() -> Iterator[None]:
    """``inspect.stack`` is :func:`stack_frames` inside (one thread: an import)."""
    real = inspect.stack
    inspect.stack = stack_frames
    try:
        yield
    finally:
        inspect.stack = real

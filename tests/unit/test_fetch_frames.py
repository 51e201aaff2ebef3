"""fetch/frames.py: the stack Scrapy's deprecated aliases read at import, without the
source look-ups that made it ~0.2 CPU-s of every Scrapy process's start-up (issue 47, 5)."""

from __future__ import annotations

import inspect
import subprocess
import sys

from invcrawl.fetch.frames import frames_without_source, module_of, stack_frames


def both_stacks() -> tuple[list[inspect.FrameInfo], list[inspect.FrameInfo]]:
    real = inspect.stack()
    with frames_without_source():
        light = inspect.stack()
    return real, light


def test_the_frames_are_those_of_inspect_stack_without_source() -> None:
    real, light = both_stacks()
    assert inspect.stack is not stack_frames  # put back
    assert [f.frame for f in light] == [f.frame for f in real]
    assert [(f.filename, f.function) for f in light] == [(f.filename, f.function) for f in real]
    assert light[0].function == "both_stacks"
    assert [f.lineno for f in light[1:]] == [f.lineno for f in real[1:]]
    assert all(f.code_context is None and f.index is None for f in light)


def test_a_frames_module_is_the_one_getmodule_finds() -> None:
    frame = inspect.currentframe()
    assert module_of(frame) is inspect.getmodule(frame) is sys.modules[__name__]
    assert module_of(inspect) is inspect  # not a frame: the real getmodule
    assert module_of(caller_module) is sys.modules[__name__]


def caller_module() -> None:
    return None


def test_put_back_when_the_import_fails() -> None:
    try:
        with frames_without_source():
            raise ImportError("a failed import")
    except ImportError:
        pass
    assert inspect.stack is not stack_frames
    assert inspect.getmodule is not module_of


def test_scrapys_deprecated_aliases_still_name_their_module() -> None:
    """What Scrapy reads the stack for: the alias's ``__module__`` (in a fresh
    interpreter, where fetch/settings.py is the first to import the handler)."""
    code = (
        "import inspect, invcrawl.fetch.settings; "
        "from scrapy.core.downloader import contextfactory, tls; "
        "from invcrawl.fetch.frames import stack_frames; "
        "assert inspect.stack is not stack_frames; "
        "print(contextfactory.ScrapyClientContextFactory.__module__, "
        "tls.ScrapyClientTLSOptions.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [
        "scrapy.core.downloader.contextfactory",
        "scrapy.core.downloader.tls",
    ]

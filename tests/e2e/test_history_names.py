"""`history NAME` takes a symbol as `show` does (issue 47.4): `history requests.get` said
the symbol "is in no version of the 5 projects" while `show requests.get` found it. Its
key, a qualified name, a last component, a name only an older version holds; a name of
no symbol or of several: one line, exit 2."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from invcrawl.localredis.server import RedisServer
from support.agentsite import PROJECT, write_site
from support.cli import Result, invcrawl
from support.synthsite import generate


@pytest.fixture(scope="module")
def redis_of_two_projects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("names")
    sites = [str(write_site(tmp / "fixlib" / v, v)) for v in ("1.0", "2.0")]
    generate(tmp / "synth" / "1.0", pages=1, per_page=2, filler_bytes=10)
    with RedisServer(tmp / "redis") as server:
        crawled = invcrawl("crawl", *sites, str(tmp / "synth" / "1.0"), "--redis", server.url,
                           "--out-dir", str(tmp / "out"), "--progress", "none", "--consumers", "1",
                           cwd=tmp)  # fmt: skip
        assert crawled.code == 0, crawled.stderr[-3000:]
        yield server.url


def history(url: str, cwd: Path, *args: str) -> Result:
    return invcrawl("history", *args, "--redis", url, cwd=cwd)


def story(url: str, cwd: Path, name: str) -> dict[str, object]:
    result = history(url, cwd, name, "--json")
    assert result.code == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_names_as_show_takes_them(redis_of_two_projects: str, tmp_path: Path) -> None:
    url = redis_of_two_projects
    by_key = story(url, tmp_path, "py:method:fixlib.Session.get")
    assert (by_key["project"], by_key["exists_in"]) == (PROJECT, ["1.0", "2.0"])
    # the qualified name and an unambiguous last component give the same history
    assert story(url, tmp_path, "fixlib.Session.get") == by_key
    assert story(url, tmp_path, "Session.get") == by_key
    assert story(url, tmp_path, "FIXLIB.SESSION.GET") == by_key  # as show: any case
    # `show` agrees on the name
    shown = invcrawl("show", "fixlib.Session.get", "--json", "--redis", url, cwd=tmp_path)
    assert json.loads(shown.stdout)["item"]["key"] == by_key["key"]
    # removed in 2.0: the latest versions hold no such name, an older one does
    legacy = story(url, tmp_path, "fixlib.legacy")
    assert (legacy["key"], legacy["removed_in"]) == ("py:function:fixlib.legacy", "2.0")
    # the text output names the key it resolved to
    text = history(url, tmp_path, "connect")
    assert text.code == 0 and text.stdout.startswith("py:function:fixlib.connect in Fixlib")


def test_a_name_of_nothing_is_one_line(redis_of_two_projects: str, tmp_path: Path) -> None:
    url = redis_of_two_projects
    missing = history(url, tmp_path, "fixlib.nothing_of_that_name")
    assert missing.code == 2, missing
    assert missing.error_lines == [
        "invcrawl: error: fixlib.nothing_of_that_name names no symbol "
        "(try `invcrawl search fixlib.nothing_of_that_name`)"
    ], missing.stderr
    unknown = history(url, tmp_path, "connect", "--project", "nosuchproject")
    assert unknown.code == 2 and len(unknown.error_lines) == 1, unknown.stderr
    assert "Traceback" not in missing.stderr + unknown.stderr
    # a key is read as a key: one held by no version says so (as before)
    absent = history(url, tmp_path, "py:function:fixlib.absent")
    assert absent.code == 2 and "is in no version" in absent.stderr, absent.stderr

"""``versions``, ``diff`` and ``history`` as an attacker's site and a newcomer find them
(issue 36), as commands against a real redis-server holding crawls written here the way
the commit script leaves them (meta, item stream, dedup hash):

* a project, version, key and parameters holding terminal escapes (OSC title, screen
  clear, colours, C1, bidirectional overrides) are shown escaped by every text output,
  the Markdown one included, piped or not; a version of 4,301 digits sorts, and neither
  breaks the order of any project nor pads the other rows;
* ``history KEY`` finds the one project holding the key among several; one that two
  projects hold asks for ``--project``, naming them;
* ``diff`` of two projects says so in one line on standard error (``-q``: nothing);
* a failed crawl (a mistyped site) is listed after its project's versions, marked, with
  its error; it is no version: ``history`` skips it, ``PROJECT@VERSION`` prefers a real
  crawl, and ``diff`` refuses it in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis

from invcrawl.common.items import key_digest
from invcrawl.frontier.keys import CRAWLS, CrawlKeys
from support.cli import Result, invcrawl

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\x9b1m\u202eevil\u2066"
RAW = ("\x1b", "\x07", "\r", "\x9b", "\u202e", "\u2066")
LONG = "9" * 4301  # past int()'s 4,300 digits: PEP 440 parsing raised ValueError
KEY = "py:function:good.connect"
EVIL_KEY = f"py:function:evil.{HOSTILE}"


def crawl(client: redis.Redis, crawl_id: str, project: str, version: str, **meta: Any) -> None:
    client.sadd(CRAWLS, crawl_id)
    fields = {"project": project, "version": version, "state": "finished", "entries": 1,
              "finished_at": 1_700_000_000_000, "site": f"/docs/{crawl_id}", "buckets": 1,
              **meta}  # fmt: skip
    client.hset(CrawlKeys(crawl_id).meta, mapping=fields)


def item(client: redis.Redis, crawl_id: str, key: str, *params: str, **fields: Any) -> None:
    """An item as the commit script leaves it: a stream entry and its dedup field."""
    data = {"key": key, "name": key.split(":", 2)[2], "domain": "py", "role": key.split(":")[1],
            "status": "ok", "signature": "f()", "doc": "Doc.", "returns": [], "raises": [],
            "versions": [],
            "params": [{"name": p, "kind": "positional-or-keyword"} for p in params],
            **fields}  # fmt: skip
    keys = CrawlKeys(crawl_id)
    client.xadd(keys.items, {"key": key, "sum": "x", "kind": "new", "data": json.dumps(data)})
    bucket, field = key_digest(key, 1)
    client.hset(keys.isum(bucket), field, "0123456789abo")


def clean(result: Result) -> None:
    text = result.stdout + result.stderr
    assert not any(c in text for c in RAW), repr(text[-3000:])
    assert "Traceback" not in text, text[-3000:]


@pytest.fixture
def fleet(redis_url: str, sync_redis: redis.Redis) -> str:
    """Good 1.0, 2.0 and a version of 4,301 digits, a failed crawl of Good (a mistyped
    site given --project/--version), a project and versions made of escapes, and Other."""
    crawl(sync_redis, "good-1", "Good", "1.0")
    crawl(sync_redis, "good-2", "Good", "2.0")
    crawl(sync_redis, "good-long", "Good", LONG)
    crawl(sync_redis, "good-typo", "Good", "3.0", state="failed", error="HTTP 404 for objects.inv")
    crawl(sync_redis, "evil-1", HOSTILE, HOSTILE + "1")
    crawl(sync_redis, "evil-2", HOSTILE, LONG + HOSTILE)
    crawl(sync_redis, "other-1", "Other", "1.0")
    item(sync_redis, "good-1", KEY, "host")
    item(sync_redis, "good-2", KEY, "host", "ssl")
    item(sync_redis, "good-long", KEY, "host", "ssl")
    item(sync_redis, "good-1", "py:module:good")
    item(sync_redis, "good-2", "py:module:good")
    item(sync_redis, "evil-1", EVIL_KEY, HOSTILE)
    item(sync_redis, "evil-2", EVIL_KEY, HOSTILE, HOSTILE + "2", returns=[{"type": HOSTILE}],
         versions=[{"kind": "deprecated", "version": HOSTILE, "text": ""}])  # fmt: skip
    item(sync_redis, "evil-1", f"py:module:evil.{HOSTILE}")
    item(sync_redis, "other-1", "py:function:other.f")
    item(sync_redis, "other-1", KEY.replace("good", "shared"))
    item(sync_redis, "good-2", KEY.replace("good", "shared"))
    return redis_url


def run(redis_url: str, tmp_path: Path, *args: str) -> Result:
    return invcrawl(*args, "--redis", redis_url, cwd=tmp_path)


def test_site_strings_shown_escaped_and_versions_in_order(fleet: str, tmp_path: Path) -> None:
    shown = run(fleet, tmp_path, "versions")
    assert shown.code == 0, shown.stderr
    clean(shown)
    lines = shown.stdout.splitlines()
    good = lines.index("Good: 3 version(s), 1 failed crawl(s)")
    rows = [line.split()[0] for line in lines[good + 1 : good + 5]]
    assert rows == ["1.0", "2.0", LONG, "FAILED"]
    assert max(len(line) for line in lines[good + 1 : good + 3]) < 120  # not padded to 4,301
    assert "\\x1b]0;pwned" in shown.stdout  # the escapes are shown, inert
    for args in (
        ["versions", HOSTILE],
        ["versions", "--json"],
        ["diff", "evil-1", "evil-2"],
        ["diff", "evil-1", "evil-2", "--markdown"],
        ["diff", "evil-1", "evil-2", "--json"],
        ["diff", "good-1", "good-long"],
        ["history", EVIL_KEY],
        ["history", EVIL_KEY, "--json"],
        ["history", KEY],
    ):
        result = run(fleet, tmp_path, *args)
        assert result.code == 0, (args, result.stderr)
        clean(result)
    notes = run(fleet, tmp_path, "diff", "evil-1", "evil-2", "--markdown").stdout
    assert "## evil.\\x1b\\]0;pwned" in notes  # escaped for the terminal, then for Markdown
    history = run(fleet, tmp_path, "history", KEY).stdout
    assert [line.split()[0] for line in history.splitlines()[1:]] == ["1.0", "2.0", LONG]


def test_history_finds_the_project_holding_the_key(fleet: str, tmp_path: Path) -> None:
    found = run(fleet, tmp_path, "history", KEY)  # four projects in this Redis
    assert found.code == 0, found.stderr
    assert found.stdout.startswith(f"{KEY} in Good: in 3 of 3 version(s), first in 1.0")
    assert "3.0" not in found.stdout  # the failed crawl is no version (no "removed")
    shared = KEY.replace("good", "shared")
    both = run(fleet, tmp_path, "history", shared)
    assert both.code == 2
    assert both.error_lines == [
        f"invcrawl: error: {shared} is in 2 projects ('Good', 'Other'): pick one with --project"
    ]
    assert run(fleet, tmp_path, "history", shared, "--project", "other").code == 0
    nowhere = run(fleet, tmp_path, "history", "py:function:nowhere")
    assert nowhere.code == 2 and len(nowhere.error_lines) == 1
    assert "in no version of the 3 projects" in nowhere.error_lines[0]


def test_diff_of_two_projects_says_so(fleet: str, tmp_path: Path) -> None:
    result = run(fleet, tmp_path, "diff", "good-1", "other-1")
    assert result.code == 0, result.stderr
    assert result.stderr.splitlines() == [
        "note: good-1 is project Good and other-1 is project Other: comparing two projects"
    ]
    assert result.stdout.startswith("Good 1.0 -> Other 1.0:")
    quiet = run(fleet, tmp_path, "diff", "good-1", "other-1", "-q")
    assert quiet.code == 0 and quiet.stderr == ""
    same = run(fleet, tmp_path, "diff", "good-1", "good-2")
    assert same.code == 0 and same.stderr == ""


def test_a_failed_crawl_is_no_version(fleet: str, sync_redis: redis.Redis, tmp_path: Path) -> None:
    listed = run(fleet, tmp_path, "versions", "Good", "--json")
    rows = json.loads(listed.stdout)["projects"][0]["versions"]
    assert [(r["crawl_id"], r["failed"]) for r in rows][-1] == ("good-typo", True)
    assert rows[-1]["error"] == "HTTP 404 for objects.inv"
    text = run(fleet, tmp_path, "versions", "Good").stdout
    rows_shown = [" ".join(line.split()) for line in text.splitlines()]
    assert rows_shown[4] == "FAILED good-typo failed not a version: HTTP 404 for objects.inv"
    refused = run(fleet, tmp_path, "diff", "Good@2.0", "Good@3.0")
    assert refused.code == 2
    assert refused.error_lines == [
        "invcrawl: error: crawl good-typo failed (HTTP 404 for objects.inv): it holds no "
        "version to compare; `invcrawl forget good-typo` removes it"
    ]
    crawl(sync_redis, "good-3", "Good", "3.0")  # crawled again from the right address
    item(sync_redis, "good-3", KEY, "host", "ssl", "timeout")
    fixed = run(fleet, tmp_path, "diff", "Good@2.0", "Good@3.0")
    assert fixed.code == 0, fixed.stderr  # Good@3.0 is the real crawl, not the failed one
    assert "new required parameter timeout" in fixed.stdout

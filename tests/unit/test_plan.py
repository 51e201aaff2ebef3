"""Planning: URI resolution, grouping by page, generated and off-site pages, sharding."""

from __future__ import annotations

import hashlib
import json
import zlib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import Request

from invcrawl.common.inventory import parse_inventory
from invcrawl.common.plan import PlanCache, base_of, contained, page_name, plan_crawl, split_uri
from invcrawl.common.sharding import fetched_url, page_fingerprint, slot_for, task_id_for

HEADER = (
    b"# Sphinx inventory version 2\n# Project: P\n# Version: 1\n"
    b"# The remainder of this file is compressed using zlib.\n"
)


def plan_of(body: str, url: str = "https://h.test/docs/objects.inv"):  # type: ignore[no-untyped-def]
    return plan_crawl(parse_inventory(HEADER + zlib.compress(body.encode())), url)


@pytest.mark.parametrize(
    "url",
    [
        "https://docs.python.org/3/library/json.html",
        "http://h.test/a b/é.html",
        "http://h.test/p.html?b=2&a=1",
        "file:///usr/share/doc/python3.11/html/index.html",
    ],
)
def test_fingerprint_is_of_the_url_scrapy_sends(url: str) -> None:
    sent = Request(url).url
    assert fetched_url(url) == sent
    data = {"method": "GET", "url": sent, "body": "", "headers": {}}
    expected = hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()
    assert page_fingerprint(url) == expected
    assert page_fingerprint(url + "#frag") == expected


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("http://h.test/q.html?a=1&b=2", "http://h.test/q.html?b=2&a=1"),
        ("http://h.test/a%2Fb.html", "http://h.test/a%2fb.html"),
        ("http://h.test/%7Euser/x.html", "http://h.test/~user/x.html"),
        ("http://h.test/x.html?q=%20", "http://h.test/x.html?q=+"),
        ("http://h.test/Page.html", "http://h.test/page.html"),
    ],
)
def test_two_requests_never_share_a_task_id(one: str, other: str) -> None:
    """Scrapy's canonical fingerprint made each pair one task (its query sorted, its
    escapes decoded): the second page and its entries were dropped."""
    assert Request(one).url != Request(other).url
    assert task_id_for(one) != task_id_for(other)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab=&%2F3é~ ?.", min_size=0, max_size=8), min_size=2, max_size=2))
def test_task_ids_are_equal_exactly_when_the_requests_are(paths: list[str]) -> None:
    one, other = (f"http://h.test/p{p}" for p in paths)
    same_request = Request(one).url.split("#")[0] == Request(other).url.split("#")[0]
    assert (task_id_for(one) == task_id_for(other)) == same_request


def test_every_entry_gets_a_task_whatever_its_page_spelling() -> None:
    """Pages that are distinct requests are distinct tasks; two spellings of one request
    are one task holding the entries of both: never an entry without a task."""
    plan = plan_of(
        "x std:label -1 q.html?a=1&b=2#x X\n"
        "y std:label -1 q.html?b=2&a=1#y Y\n"
        "z std:label -1 caf%C3%A9.html#z Z\n"
        "w std:label -1 café.html#w W\n"
    )
    ids = [p.task_id for p in plan.pages]
    assert len(ids) == len(set(ids)) == 3
    assert sorted(t.name for p in plan.pages for t in p.targets) == ["w", "x", "y", "z"]
    (cafe,) = [p for p in plan.pages if "caf" in p.page_url]
    assert [t.anchor for t in cafe.targets] == ["z", "w"]


@pytest.mark.parametrize(
    "uri",
    [
        "../../secret.txt",
        "%2e%2e/%2e%2e/secret.txt",
        "%2E%2e/%2e%2E/secret.txt",
        "..%2f..%2fsecret.txt",
        "..%2F..%2Fsecret.txt",
        "%252e%252e/%252e%252e/secret.txt",
        "%25252e%25252e%25252fsecret.txt",
        "..%5c..%5csecret.txt",
        "..\\..\\secret.txt",
        "..;/..;/secret.txt",
        "sub/..;x=1/..;/..;/secret.txt",
        "%c0%ae%c0%ae/%c0%ae%c0%ae/secret.txt",
        "%u002e%u002e/%u002e%u002e/secret.txt",
        "a/%2e%2e/%2e%2e/%2e%2e/secret.txt",
    ],
)
@pytest.mark.parametrize(
    "base", ["file:///srv/site/docs/objects.inv", "http://h.test/docs/objects.inv"]
)
def test_entries_that_leave_the_site_folder_are_offsite(uri: str, base: str) -> None:
    plan = plan_of(f"leak std:label -1 {uri}#x X\nok std:label -1 index.html#y Y\n", url=base)
    status = {p.targets[0].name: p for p in plan.pages}
    assert status["ok"].status == "fetch"
    assert status["leak"].status == "offsite", status["leak"]
    assert "outside the inventory's directory" in (status["leak"].reason or "") or "hides" in (
        status["leak"].reason or ""
    )


@pytest.mark.parametrize(
    "uri",
    ["a/%2e%2e/b.html", "a/..;/b.html", "./%2e/b.html", "a%2f%2e%2e%2fb.html"],
)
def test_encoded_dot_segments_are_never_sent_even_inside(uri: str) -> None:
    (page,) = plan_of(f"x std:label -1 {uri}#x X\n").pages
    assert page.status == "offsite" and "hides" in (page.reason or "")


@pytest.mark.parametrize(
    "uri",
    ["a/b.html", "100%25.html", "a..b/c.html", "..x/y.html", "a/.hidden.html", "%7Euser/x.html"],
)
def test_ordinary_paths_stay_on_the_site(uri: str) -> None:
    (page,) = plan_of(f"x std:label -1 {uri}#x X\n").pages
    assert page.status == "fetch", page.reason


def test_contained_on_its_own() -> None:
    assert contained("a/b.html") is True
    assert contained("a/%2e%2e/b.html") is False
    assert contained("%2e%2e/b.html") is None


def test_slots_spread_and_follow_the_id() -> None:
    ids = [task_id_for(f"http://h.test/p{i}.html") for i in range(4000)]
    counts = Counter(slot_for(i, 16) for i in ids)
    assert set(counts) == set(range(16))
    assert max(counts.values()) < 1.3 * 4000 / 16
    assert all(slot_for(i, 1) == 0 for i in ids[:10])
    with pytest.raises(ValueError):
        slot_for(ids[0], 0)


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("library/json.html#json.dumps", ("library/json.html", "json.dumps")),
        ("index.html#document-index#module-mylib", ("index.html", "module-mylib")),
        ("api/x.html##PyQt5-Enginio", ("api/x.html", "PyQt5-Enginio")),
        ("ref/settings/", ("ref/settings/", "")),
        ("", ("", "")),
        ("#top", ("", "top")),
    ],
)
def test_split_uri(uri: str, expected: tuple[str, str]) -> None:
    assert split_uri(uri) == expected


def test_grouping_by_page_and_anchors() -> None:
    plan = plan_of(
        "json py:module 0 library/json.html#module-$ -\n"
        "json.dumps py:function 1 library/json.html#$ -\n"
        "json.loads py:function 1 library/json.html#$ -\n"
        "intro std:doc -1 intro.html Introduction\n"
    )
    assert plan.base_url == "https://h.test/docs/"
    by_url = {p.page_url: p for p in plan.pages}
    page = by_url["https://h.test/docs/library/json.html"]
    assert [t.anchor for t in page.targets] == ["module-json", "json.dumps", "json.loads"]
    assert page.task_id == task_id_for(page.page_url)
    assert by_url["https://h.test/docs/intro.html"].targets[0].anchor == ""
    assert plan.entries == 4 and plan.fetch_pages == 2


def test_dirhtml_uris() -> None:
    plan = plan_of(
        "index std:doc -1 '' Home\n"
        "ref/settings std:doc -1 ref/settings/ Settings\n"
        "DEBUG std:setting -1 ref/settings/#std-setting-$ -\n"
        "top std:label -1 #top Top\n".replace("''", "")
    )
    urls = sorted(p.page_url for p in plan.pages)
    assert urls == ["https://h.test/docs/", "https://h.test/docs/ref/settings/"]
    settings = next(p for p in plan.pages if p.page_url.endswith("settings/"))
    assert [t.anchor for t in settings.targets] == ["", "std-setting-DEBUG"]
    assert settings.fetch_url == settings.page_url  # an HTTP server serves the index


def test_file_directory_pages_are_fetched_as_index_html() -> None:
    plan = plan_of("a std:doc -1 a/ A\n", url="file:///srv/docs/objects.inv")
    (page,) = plan.pages
    assert page.page_url == "file:///srv/docs/a/"
    assert page.fetch_url == "file:///srv/docs/a/index.html"


def test_generated_pages_are_skipped_and_offsite_refused() -> None:
    plan = plan_of(
        "genindex std:label -1 genindex.html Index\n"
        "py-modindex std:label -1 py-modindex.html Module Index\n"
        "search std:label -1 search.html Search Page\n"
        "gi std:label -1 genindex/ Index\n"
        "ext std:label -1 https://other.test/x.html#y Y\n"
        "up std:label -1 ../outside.html#z Z\n"
        "ok std:label -1 searching.html#ok OK\n"
    )
    status = {p.page_url.removeprefix("https://h.test/docs/"): p.status for p in plan.pages}
    assert status["genindex.html"] == "skipped"
    assert status["py-modindex.html"] == "skipped"
    assert status["search.html"] == "skipped"
    assert status["genindex/"] == "skipped"
    assert status["searching.html"] == "fetch"
    offsite = [p for p in plan.pages if p.status == "offsite"]
    assert {p.page_url for p in offsite} == {
        "https://other.test/x.html",
        "https://h.test/outside.html",
    }
    assert all(p.reason for p in offsite)
    assert plan.skipped_entries == 4 and plan.offsite_entries == 2


def test_duplicate_keys_are_counted_once() -> None:
    plan = plan_of(
        "m py:module 0 a.html#module-m -\nm py:module 0 b.html#module-m -\n"
        "x std:label -1 a.html#x X\n"
    )
    assert plan.entries == 2
    assert [d.uri for d in plan.duplicates] == ["b.html#module-m"]
    assert [p.page_url.rsplit("/", 1)[1] for p in plan.pages] == ["a.html"]


def test_redirected_inventory_resolves_against_the_final_url() -> None:
    assert base_of("https://h.test/en/latest/objects.inv") == "https://h.test/en/latest/"
    assert page_name("https://h.test/x/genindex.html") == "genindex"
    assert page_name("https://h.test/x/genindex/") == "genindex"


def test_plan_cache_reuses_a_plan_only_for_the_same_bytes_and_stays_bounded() -> None:
    cache = PlanCache(max_entries=5)
    body = HEADER + zlib.compress(b"a py:function 1 a.html#$ -\nb py:function 1 b.html#$ -\n")
    inventory = parse_inventory(body)
    plan = plan_crawl(inventory, "https://one.test/objects.inv")
    cache.put("https://one.test/objects.inv", "sha-1", inventory, plan)
    assert cache.get("https://one.test/objects.inv", "sha-1") == (inventory, plan)
    assert cache.get("https://one.test/objects.inv", "sha-2") is None  # other bytes
    assert cache.get("https://two.test/objects.inv", "sha-1") is None  # other site
    # A second site of 2 entries fits (4 of 5); a third pushes out the least recently used.
    cache.put("https://two.test/objects.inv", "sha-2", inventory, plan)
    assert cache.get("https://one.test/objects.inv", "sha-1") is not None  # used: kept
    cache.put("https://three.test/objects.inv", "sha-3", inventory, plan)
    assert cache.get("https://two.test/objects.inv", "sha-2") is None
    assert len(cache) == 2
    # A new version of a site replaces its old plan; one larger than the bound is not kept.
    cache.put("https://one.test/objects.inv", "sha-4", inventory, plan)
    assert cache.get("https://one.test/objects.inv", "sha-1") is None
    big = parse_inventory(
        HEADER + zlib.compress(b"".join(b"e%d py:function 1 e.html#$ -\n" % i for i in range(6)))
    )
    cache.put(
        "https://big.test/objects.inv",
        "sha-5",
        big,
        plan_crawl(big, "https://big.test/objects.inv"),
    )
    assert cache.get("https://big.test/objects.inv", "sha-5") is None and len(cache) == 2

"""The dashboard in a real headless browser, end to end.

Two generated sites are crawled over loopback HTTP by a real consumer (``demo``, slowed
down so that its progress can be watched; ``flaky``, with a page that always answers 500
and so ends in the dead-letter queue) while ``invcrawl dashboard`` runs as its own
process. Debian's ``chromium``, driven through the DevTools protocol, loads the page and
sees the crawl's row appear and its progress move, the throughput chart drawn, the dead
letter with its reason and redrive command, and the crawl finishing; the page fits a
narrow screen. Screenshots are kept in ``tests/artifacts/`` (``dashboard.png``,
``dashboard-narrow.png``).
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from support.browser import CHROMIUM, Browser
from support.crawl import REPO, Harness, Proc, Throttle, build_site, wait_for
from support.fleetdata import add_crawl
from support.httpserver import serve

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(240),
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="chromium is not installed (apt-get install --no-install-recommends chromium)",
    ),
]

ARTIFACTS = REPO / "tests" / "artifacts"
ROW = "document.querySelector('tr[data-crawl=\"demo\"]')"


async def until(browser: Browser, expression: str, timeout: float, what: str) -> Any:
    """Evaluate ``expression`` in the page until it is truthy."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = await browser.evaluate(expression)
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            text = await browser.evaluate("document.body.innerText.slice(0, 3000)")
            raise AssertionError(f"timed out after {timeout:.0f}s: {what}; page:\n{text}")
        await asyncio.sleep(0.2)


def test_the_dashboard_shows_a_crawl_moving_in_a_browser(redis_url: str, tmp_path: Path) -> None:
    root = tmp_path / "www"
    build_site(root / "demo", pages=40, functions=2, project="Demo")
    build_site(root / "flaky", pages=6, functions=1, project="Flaky", extras=False)
    throttle = Throttle(delay=0.4, actions={"/flaky/api/mod0002.html": "500"})
    harness = Harness(
        redis_url, "demo", tmp_path / "work", max_tries=2, backoff_base=0.2, concurrency=2
    )
    with serve(root, throttle) as http:
        try:
            harness.produce(http.url + "demo/", 4)
            flaky = harness.cli(
                "produce", http.url + "flaky/", "--crawl-id", "flaky", crawl_id=False
            )
            assert flaky.code == 0, flaky.stderr
            argv = [sys.executable, "-m", "invcrawl", "dashboard", "--redis", redis_url]
            dash = harness.spawn("dashboard", [*argv, "--port", "0"])
            url = wait_for(
                lambda: (m := re.search(r"http://127\.0\.0\.1:\d+/", dash.output())) and m[0],
                30,
                "the dashboard to listen",
                diagnose=dash.tail,
            )
            consumers: list[Proc] = []

            # the consumer starts once the browser shows the crawl's row: a browser slow
            # to start on a loaded machine must not find the crawl already done
            def start() -> None:
                consumers.append(harness.start_consumer("--burst", crawl_id=False))

            asyncio.run(watch(url, tmp_path, throttle, start))
            assert consumers[0].wait(60) == 0, consumers[0].tail()
            assert dash.alive, dash.tail()
            dash.terminate()
            assert dash.wait(10) == 143, dash.tail()  # stopped by SIGTERM, cleanly
        finally:
            harness.close()


async def watch(
    url: str, tmp_path: Path, throttle: Throttle, start_consumer: Callable[[], None]
) -> None:
    async with Browser.launch(tmp_path / "chromium") as browser:
        await browser.viewport(1280, 900)
        await browser.navigate(url)
        # the crawl's row appears, then its progress moves (live, without a reload)
        first = int(await until(browser, f"{ROW}?.dataset.done", 60, "the crawl's row"))
        start_consumer()
        await until(browser, f"+{ROW}.dataset.done > {first}", 90, "the progress to move")
        moved = int(await browser.evaluate(f"{ROW}.dataset.done"))
        await until(browser, f"+{ROW}.dataset.done > {moved}", 30, "the progress to move again")
        label = await browser.evaluate(f"{ROW}.querySelector('.progress').innerText")
        assert re.search(r"\d+/46 · \d+\.\d%", label), label
        # each crawl's project and version, in columns of their own (issue 47)
        named = await browser.evaluate(
            f"['.project', '.version'].map((c) => {ROW}.querySelector(c).innerText)"
        )
        assert named == ["Demo", "1.0"], named
        headers = await browser.evaluate(
            "[...document.querySelectorAll('#crawls th')].map((th) => th.innerText)"
        )
        assert headers[:4] == ["crawl", "project", "version", "state"], headers
        await until(browser, "document.querySelectorAll('#chart path').length", 30, "the chart")
        # the flaky crawl's page that always fails: its dead letter, reason and command
        dead = await until(
            browser, "document.querySelector('#dead tr[data-task]')?.innerText", 60, "a dead letter"
        )
        assert "flaky" in dead and "invcrawl dlq redrive --crawl-id flaky" in dead, dead
        assert await browser.evaluate("document.querySelector('#live').className") == "on"
        shot = await browser.screenshot(ARTIFACTS / "dashboard.png")
        assert shot.startswith(b"\x89PNG") and len(shot) > 20_000

        # one crawl in detail: its slots, consumers, dead letters and the redrive command
        await browser.evaluate("document.querySelector('a.open[data-id=\"flaky\"]').click()")
        detail = await until(
            browser,
            "document.querySelector('#detail:not([hidden]) [data-task]') && "
            "document.querySelector('#detail').innerText",
            30,
            "the flaky crawl in detail",
        )
        assert "invcrawl dlq redrive --all --crawl-id flaky" in detail, detail
        assert "Slots" in detail and "Dead letters (1)" in detail, detail
        await browser.evaluate("document.querySelector('#closedetail').click()")
        assert await browser.evaluate("document.querySelector('#detail').hidden")

        # a narrow screen: nothing wider than the viewport but the scrolling tables
        await browser.viewport(390, 844, mobile=True)
        await asyncio.sleep(0.5)
        overflow = await browser.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 1, f"the page is {overflow}px wider than a phone"
        assert await browser.evaluate(f"!!{ROW}")
        await browser.screenshot(ARTIFACTS / "dashboard-narrow.png")

        throttle.delay = 0.0  # let the crawl finish: the page shows it
        await until(
            browser, f"{ROW}.querySelector('.badge').innerText === 'finished'", 60, "finished"
        )


def test_five_hundred_crawls_sorted_filtered_paginated(redis_url: str, tmp_path: Path) -> None:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    for i in range(500):
        state = ("running", "finished", "producing", "failed")[i % 4]
        add_crawl(client, f"site-{i:03d}", state, tasks=200, done=(i * 7) % 200)
    client.close()
    harness = Harness(redis_url, "site-000", tmp_path / "work")
    try:
        argv = [sys.executable, "-m", "invcrawl", "dashboard", "--redis", redis_url]
        dash = harness.spawn("dashboard", [*argv, "--port", "0"])
        url = wait_for(
            lambda: (m := re.search(r"http://127\.0\.0\.1:\d+/", dash.output())) and m[0],
            30,
            "the dashboard to listen",
            diagnose=dash.tail,
        )
        asyncio.run(browse_many(url, tmp_path))
    finally:
        harness.close()


async def browse_many(url: str, tmp_path: Path) -> None:
    rows = "document.querySelectorAll('#crawls tbody tr[data-crawl]')"
    first = "document.querySelector('#crawls tbody tr[data-crawl]').dataset.crawl"
    async with Browser.launch(tmp_path / "chromium") as browser:
        await browser.viewport(1280, 900)
        await browser.navigate(url)
        await until(browser, f"{rows}.length === 50", 60, "the first page of 50 crawls")
        assert await browser.evaluate("document.querySelector('#range').innerText") == (
            "1–50 of 500"
        )
        # open crawls (producing, running) first, by id, as `status` lists them
        assert await browser.evaluate(first) == "site-000"
        await browser.evaluate("document.querySelector('#next').click()")
        await until(
            browser, "document.querySelector('#range').innerText === '51–100 of 500'", 5, "page 2"
        )
        # sort by progress, highest first: the crawl at 199/200 leads
        await browser.evaluate("document.querySelector('th[data-sort=\"progress\"]').click()")
        await until(browser, f"+{rows}[0].dataset.done === 199", 5, "sorted by progress")
        assert await browser.evaluate(first) == "site-057"
        # filter: the pager follows
        await browser.evaluate(
            "const f = document.querySelector('#filter'); f.value = 'site-04';"
            "f.dispatchEvent(new Event('input'))"
        )
        await until(browser, f"{rows}.length === 10", 5, "10 crawls matching site-04")
        assert await browser.evaluate("document.querySelector('#range').innerText") == (
            "1–10 of 10"
        )
        # and it keeps up: an update of 500 crawls renders one page of rows, not 500
        # (its time is printed, not asserted: a loaded machine's, not the page's)
        took = await browser.evaluate(
            "(() => { const t = performance.now(); render(); return performance.now() - t; })()"
        )
        await browser.evaluate(
            "{ const f = document.querySelector('#filter'); f.value = '';"
            "f.dispatchEvent(new Event('input')) }"
        )
        await until(browser, f"{rows}.length === 50", 30, "one page of 50 rows")
        print(f"rendering 500 crawls took {took:.0f} ms")
        await browser.screenshot(ARTIFACTS / "dashboard-500.png", full_page=False)

"""Terminal rendering: the crawl command's progress line, lines fitted to a terminal's
width and never cut when piped, the summary of `crawl --json`."""

from __future__ import annotations

from typing import Any

from invcrawl.frontier.summary import CrawlStatus, CrawlSummary, FleetStatus, FleetTotals
from invcrawl.render import (
    crawl_json,
    crawl_seconds,
    duration,
    first_line,
    fleet_progress_line,
    interrupted_note,
)
from invcrawl.render import progress_line as _progress_line
from invcrawl.render_status import render_dlq, render_reports
from invcrawl.render_status import render_fleet as _render_fleet
from invcrawl.render_status import render_status as _render_status


def progress_line(s: dict[str, Any], width: int | None = None) -> str:
    return _progress_line(CrawlSummary.from_dict({"crawl_id": "c", **s}), width)


def render_status(s: dict[str, Any], width: int | None = None) -> str:
    return _render_status(CrawlStatus.from_dict(s), width)


def render_fleet(fleet: dict[str, Any], width: int | None = None) -> str:
    return _render_fleet(FleetStatus.from_dict(fleet), width)


def status(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "producer": "done",
        "pages_total": 500,
        "pages_done": 250,
        "pages_dead": 1,
        "items": 7000,
        "items_by_status": {"ok": 6990},
        "rate_pages_s": 50.0,
        "eta_s": 5.0,
    }
    return base | overrides


def test_progress_counts_pages_items_and_dead() -> None:
    line = progress_line(status())
    assert "251/500 pages" in line and "7000 items (6990 ok)" in line and "(1 dead)" in line
    assert line.endswith("50.0/s ETA 5s")  # piped (lines mode): whole


def test_progress_on_a_narrow_terminal_drops_items_then_rate_but_keeps_the_eta() -> None:
    """The bar once was cut at 79 columns, its ETA first."""
    big = status(pages_total=1234567, pages_done=123456, items=12345678, eta_s=7200.0)
    big["items_by_status"] = {"ok": 12345678}
    whole = progress_line(big)
    assert len(whole) > 79 and "12345678 items" in whole
    for width in (100, 79, 60, 50):
        line = progress_line(big, width)
        assert len(line) <= width and line.endswith("ETA 2h00m"), (width, line)
    assert "items" not in progress_line(big, 79) and "/s" in progress_line(big, 79)
    assert "/s" not in progress_line(big, 50)
    one = CrawlSummary.from_dict({**big, "state": "running", "crawl_id": "a"})
    totals = FleetTotals()
    for crawl_id in "abc":
        totals.update(crawl_id, one)
    fleet = fleet_progress_line(totals, 50)
    assert len(fleet) <= 50 and "0/3 crawls done" in fleet


def test_fleet_totals_replace_a_crawls_share_as_it_changes() -> None:
    """The fleet line's totals are kept, not summed for each line: a crawl read again
    replaces its share; equal to the sums over the latest summaries."""
    totals = FleetTotals()
    latest = {}
    for n in range(200):
        crawl_id = f"c{n % 50}"
        state = "finished" if n >= 150 else "running"
        summary = CrawlSummary.from_dict(
            {**status(pages_total=10, pages_done=n // 50 * 3, pages_dead=n % 2, rate_pages_s=0.1),
             "state": state, "crawl_id": crawl_id}
        )  # fmt: skip
        latest[crawl_id] = summary
        totals.update(crawl_id, summary)
    assert totals.crawls == 50
    assert totals.pages_total == sum(s.pages_total for s in latest.values())
    assert totals.pages_settled == sum(s.pages_settled for s in latest.values())
    assert totals.pages_dead == sum(s.pages_dead for s in latest.values())
    assert totals.settled_crawls == 50
    assert totals.rate_pages_s == 0.0  # (finished crawls have no rate)
    assert "50/50 crawls done" in fleet_progress_line(totals)


def test_before_the_inventory_is_read_it_says_so_instead_of_zero_pages() -> None:
    for producer in (None, "running"):
        line = progress_line(status(producer=producer, pages_total=0, pages_done=0, items=0))
        assert line.startswith("producing:") and "0/0" not in line
    # A crawl whose producer is done always shows its pages, even an empty one.
    assert "0/0 pages" in progress_line(status(pages_total=0, pages_done=0, pages_dead=0))


def summary(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "crawl_id": "docs.example.org-" + "very-long-" * 8 + "id",
        "state": "finished",
        "producer": "done",
        "site": "https://docs.example.org/" + "deep/" * 20,
        "project": "Demo",
        "version": "1.0",
        "entries_total": 10,
        "pages_total": 4,
        "pages_done": 4,
        "pages_dead": 0,
        "items": 10,
        "items_by_status": {"ok": 9, "skipped": 1},
        "stream_entries": 10,
        "per_slot": [{"slot": 0, "queued": 0, "inflight": 0, "delayed": 0, "owner": None}],
        "consumers_alive": [],
        "elapsed_s": 1.0,
        "rate_pages_s": 4.0,
        "eta_s": None,
        "counters": {"items_new": 10},
        "error": "HTTP 503 from " + "https://docs.example.org/" + "x" * 120,
        "refresh_round": 3,
        "refresh_interval_s": 7200.0,
        "refresh_adaptive": True,
        "next_refresh_at": 1_000_000 + 3_600_000,
        "server_time": 1_000_000,
    }
    return base | overrides


def test_piped_output_is_never_cut_and_a_terminal_gets_its_width() -> None:
    s = summary()
    dlq = [
        {
            "crawl_id": s["crawl_id"],
            "id": "0123456789abcdef",
            "tries": 5,
            "died_at": 1_700_000_000_000,
            "reason": "HTTP 500 " + "r" * 100,
            "url": "https://docs.example.org/" + "p" * 150,
        }
    ]
    fleet = {
        "crawls": [s],
        "hosts": [
            {
                "host": "https://" + "h" * 90 + ":443",
                "in_flight": 1,
                "limit": 4,
                "delay_s": 0.0,
                "blocked_until": None,
            }
        ],
        "totals": {
            "crawls": 1,
            "open": 0,
            "pages_total": 4,
            "pages_done": 4,
            "pages_dead": 0,
            "items": 10,
            "rate_pages_s": 0.0,
        },
        "server_time": 1_000_000,
    }
    for text in (render_status(s), render_fleet(fleet), render_dlq(dlq)):
        assert s["crawl_id"] in text or "0123456789abcdef" in text
    assert s["error"] in render_status(s) and s["site"] in render_status(s)
    assert s["error"] in render_fleet(fleet) and fleet["hosts"][0]["host"] in render_fleet(fleet)
    assert dlq[0]["url"] in render_dlq(dlq) and dlq[0]["reason"] in render_dlq(dlq)
    assert dlq[0]["crawl_id"] in render_dlq(dlq)  # rows of several crawls name theirs
    for width in (60, 80, 160):
        for text in (render_status(s, width), render_fleet(fleet, width), render_dlq(dlq, width)):
            assert max(len(line) for line in text.splitlines()) <= width, text
    # a wide terminal shows what a narrow one cuts
    assert s["crawl_id"] in render_fleet(fleet, 160) and s["crawl_id"] not in render_fleet(
        fleet, 80
    )


def test_status_and_fleet_show_the_refresh_interval_and_next_round() -> None:
    text = render_status(summary())
    assert "every 2h00m (auto)" in text and "next in 1h00m" in text
    fleet_text = render_fleet(
        {
            "crawls": [summary(crawl_id="a")],
            "hosts": [],
            "totals": {
                "crawls": 1,
                "open": 0,
                "pages_total": 4,
                "pages_done": 4,
                "pages_dead": 0,
                "items": 10,
                "rate_pages_s": 0,
            },
            "server_time": 1_000_000,
        }
    )
    assert "  refresh every 2h00m (auto), next in 1h00m" in fleet_text.splitlines()


def test_durations_of_days() -> None:
    assert [duration(s) for s in (5, 65, 3700, 7 * 86400, 86400 + 60)] == [
        "5s",
        "1m05s",
        "1h01m",
        "7d00h",
        "24h01m",
    ]


def test_crawl_json_names_every_figure() -> None:
    s = summary(crawl_id="a", counters={"items_new": 12, "items_updated": 2})
    report = crawl_json(
        {"a": CrawlSummary.from_dict(s)},
        {"a": 10},
        {"a": "a.jsonl"},
        {"a": {"items_new": 10}},
        1.23456,
        0,
    )
    (crawl,) = report["crawls"]
    assert crawl["pages"] == {"total": 4, "done": 4, "dead": 0}
    assert crawl["items"] == {
        "total": 10,
        "by_status": {"ok": 9, "skipped": 1},
        "by_generator": {},  # the summary has no generator counters
    }
    assert (crawl["output"], crawl["written"], crawl["entries"]) == ("a.jsonl", 10, 10)
    assert crawl["refresh"]["added"] == 2 and crawl["refresh"]["changed"] == 2
    assert report["seconds"] == 1.235 and report["exit_code"] == 0


def test_a_refresh_round_says_it_reads_the_inventory_instead_of_zero_percent() -> None:
    """A refresh round keeps the last round's page count while its producer reads the
    inventory again: `0/500 pages` at 0% looked stuck until the round was done."""
    line = progress_line(status(producer="running", pages_done=0, pages_dead=0, refresh_round=2))
    assert line.startswith("refresh round 2: reading the inventory") and "0.0%" not in line
    moving = progress_line(status(producer="running", pages_done=40, pages_dead=0))
    assert "40/500 pages" in moving  # pages settling while the producer enqueues: shown


def test_the_first_line_is_whole_when_piped() -> None:
    sites = [(f"/srv/docs/site-{n}", f"srv-docs-a-rather-long-crawl-id-{n}") for n in range(4)]
    piped = first_line(sites, None)
    assert piped == (
        "crawl " + ", ".join(c for _, c in sites) + ": reading the inventory of 4 sites"
    )
    narrow = first_line(sites, 80)
    assert len(narrow) <= 80 and narrow.startswith("crawl srv-docs-a-rather-long-crawl-id-0, ")
    assert narrow.endswith(", ...: reading the inventory of 4 sites")


def test_failed_crawls_say_how_to_clear_them() -> None:
    failed = summary(crawl_id="docs.example.org-typo", state="failed", error="HTTP 404")
    fleet = {"crawls": [failed, summary()], "hosts": [], "consumers": [], "dead_letters": []}
    text = render_fleet(fleet)
    assert "  error: HTTP 404" in text
    assert "1 failed, listed until forgotten: `invcrawl forget docs.example.org-typo --yes`" in text
    detail = render_status(failed)
    assert "`invcrawl forget docs.example.org-typo --yes` removes it" in detail
    assert "listed until forgotten" not in render_fleet({**fleet, "crawls": [summary()]})


def test_an_interrupted_crawl_says_what_is_kept() -> None:
    done = interrupted_note(["a", "b"], ["a", "b"], {"a": 3, "b": 4})
    assert done == "interrupted: run the same command again to resume"
    note = interrupted_note(["a", "b", "c"], ["a"], {"a": 3, "b": 2, "c": 1})
    assert note.startswith(f"{done}: 2 crawls (b, c) are not finished, the items so far are kept")
    assert note.endswith("not in a partial file (`invcrawl export --crawl-id b` writes them)")
    # the export is hinted for a crawl that holds items, never one that has none (or
    # does not exist yet: Ctrl-C while its inventory was read)
    held = interrupted_note(["a", "b", "c"], [], {"c": 5})
    assert held.endswith("(`invcrawl export --crawl-id c` writes them)")
    nothing = interrupted_note(["py-int"], [], {})
    assert nothing == f"{done}: crawl py-int is not finished and no item is stored yet"
    assert "export" not in nothing


def test_a_summary_gives_the_crawl_its_own_time() -> None:
    """A crawl of seconds in a run of a minute said "finished in 1m07s"."""
    own = CrawlSummary("c", state="finished", created_at=10_000, started_at=11_000,
                       finished_at=14_500)  # fmt: skip
    assert crawl_seconds(own, 67.0) == 4.5  # created -> finished
    refreshed = CrawlSummary("c", state="finished", created_at=10_000, refresh_round=2,
                             last_refresh_at=90_000, finished_at=92_000)  # fmt: skip
    assert crawl_seconds(refreshed, 67.0) == 2.0  # its round's
    assert crawl_seconds(CrawlSummary("c", state="failed", created_at=10_000), 67.0) == 67.0


def test_a_report_names_its_roles_whole_when_piped() -> None:
    role = "rst:directive:option:" + "x" * 40
    counts = {"total": 1, "ok": 1}
    report = {"crawl_id": "c", "roles": {role: counts}, "totals": counts}
    assert role in render_reports([report])
    assert all(len(line) <= 100 for line in render_reports([report], 100).splitlines())


def test_a_finished_crawl_shows_one_line_for_its_empty_slots() -> None:
    """16 rows of zeros said nothing: the slots holding something are listed, and the
    others counted."""
    empty = [
        {"slot": n, "queued": 0, "inflight": 0, "delayed": 0, "owner": None} for n in range(16)
    ]
    done = render_status(summary(per_slot=empty))
    assert "slots    16, all empty" in done and "inflight" not in done
    busy = [*empty[:15], {"slot": 15, "queued": 3, "inflight": 1, "delayed": 0, "owner": "c1"}]
    running = render_status(summary(per_slot=busy))
    rows = [line for line in running.splitlines() if line.strip().startswith("15 ")]
    assert len(rows) == 1 and "c1" in rows[0]
    assert "(15 empty slots not shown)" in running


def test_a_running_crawl_no_consumer_serves_is_paused() -> None:
    """After a Ctrl-C, `status` showed "[running] ETA 45s consumers 0": the rate of the
    last minute, no consumer left to make it true."""
    left = {"crawl_id": "py", "state": "running", **status(), "consumers_alive": []}
    text = render_status(left)
    assert text.startswith("crawl py  [paused]"), text
    assert "ETA -" in text and "consumers 0" in text and "ETA 5s" not in text
    served = render_status({**left, "consumers_alive": ["host-1-0"]})
    assert served.startswith("crawl py  [running]") and "ETA 5s" in served
    totals = {"crawls": 2, "open": 2, "pages_total": 1000, "pages_done": 500,
              "pages_dead": 2, "items": 14000, "rate_pages_s": 50.0}  # fmt: skip
    crawls = [{**left, "crawl_id": "alone"}, {**left, "crawl_id": "served", "consumers_alive": 1}]
    rows = {
        line.split()[0]: line.split()
        for line in render_fleet({"crawls": crawls, "hosts": [], "totals": totals}).splitlines()
        if line.startswith(("alone", "served"))
    }
    assert rows["alone"][1] == "paused" and rows["alone"][-1] == "-"
    assert rows["served"][1] == "running" and rows["served"][-1] == "50.0"
    # --json keeps the stored state (and says how many consumers serve it)
    assert CrawlStatus.from_dict(left).summary.state == "running"

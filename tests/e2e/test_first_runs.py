"""A newcomer's first runs of `invcrawl crawl` (issue 36): site paths holding a space or a
`#`, on the command line and in a `--sites` file with a site that cannot be read (one
line, the others finish: never "producing..." for ever while the consumers exit again
and again); the run's first line whole when piped; "producing" said once; `-v` showing
the consumers' invcrawl records; `--consumers` bounded; the dead-letter hint naming the
crawl; a consumer that cannot start stopping the run in one line."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from invcrawl import supervisor as crawl_module
from invcrawl.common.settings.config import load_config
from invcrawl.common.site import crawl_id_for
from invcrawl.errors import UserError
from invcrawl.localredis.server import RedisServer, free_port
from invcrawl.supervisor import CrawlRun
from support.cli import invcrawl
from support.crawl import Site, Throttle, build_site
from support.datahome import user_data_dir
from support.httpserver import serve

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def keys_of(path: Path) -> set[str]:
    return {json.loads(line)["key"] for line in path.read_text().splitlines()}


def test_paths_with_spaces_a_broken_site_and_verbose(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    spaced = build_site(root / "site with space", pages=4, functions=2)
    hashed = build_site(root / "v#2", pages=3, functions=2)
    other = build_site(root / "other site", pages=2, functions=1)
    refused = f"http://127.0.0.1:{free_port()}/docs/"  # nothing listens there
    listing = tmp_path / "sites.txt"
    listing.write_text(
        f"# the sites\n{root / 'site with space'}   # a comment after it\n\n"
        f"{root / 'v#2'}\n{refused}\n"
    )
    ids = [crawl_id_for(str(root / "site with space")), crawl_id_for(str(root / "v#2"))]
    broken = crawl_id_for(refused)
    out = tmp_path / "out"
    with RedisServer(tmp_path / "redis") as server:
        run = invcrawl(
            "crawl", "--sites", str(listing), "--redis", server.url, "--out-dir", str(out),
            "--consumers", "2", "--progress", "lines", "-v", cwd=tmp_path, timeout=300,
        )  # fmt: skip
        err = run.stderr
        assert run.code == 1, err
        assert "Traceback" not in err and "restarting it" not in err, err
        assert err.splitlines()[0] == (
            f"crawl {ids[0]}, {ids[1]}, {broken}: reading the inventory of 3 sites"
        )  # whole: piped output is never cut
        errors = [line for line in err.splitlines() if line.startswith("invcrawl: error:")]
        assert len(errors) == 1 and broken in errors[0] and "connection refused" in errors[0]
        assert keys_of(out / f"{ids[0]}.jsonl") == spaced.keys
        assert keys_of(out / f"{ids[1]}.jsonl") == hashed.keys
        assert err.count("reading the inventory and enqueueing") <= 1, err  # not once per tick
        assert "consumer 0: [invcrawl." in err, err  # -v: the consumers' records

        # On the command line, a path with a space is one site.
        one = invcrawl(
            "crawl", str(root / "other site"), "-o", "other.jsonl", "--redis", server.url,
            "--consumers", "1", cwd=tmp_path, timeout=300,
        )  # fmt: skip
        assert one.code == 0, one.stderr
        assert keys_of(tmp_path / "other.jsonl") == other.keys
        # Run again (nothing left to do) with an absurd --consumers: one is started.
        again = invcrawl(
            "crawl", str(root / "site with space"), "-o", "again.jsonl", "--redis", server.url,
            "--consumers", "100000", cwd=tmp_path, timeout=300,
        )  # fmt: skip
        assert again.code == 0, again.stderr
        assert "starting 1 consumer(s), not 100000: 0 page(s) left" in again.stderr
        assert keys_of(tmp_path / "again.jsonl") == spaced.keys
        logs = {p.name for p in (user_data_dir() / "logs" / ids[0]).glob("*.log")}
        assert logs == {"consumer-0.log"}


def test_the_dead_letter_hint_names_the_crawl(tmp_path: Path) -> None:
    site = build_site(tmp_path / "www" / "dead", pages=3, functions=1)
    throttle = Throttle(actions={f"/dead{Site.url_path(1)}": "403"})
    with RedisServer(tmp_path / "redis") as server, serve(tmp_path / "www", throttle) as http:
        url = f"{http.url}dead/"
        run = invcrawl(
            "crawl", url, "-o", "dead.jsonl", "--redis", server.url, "--consumers", "1",
            "--max-tries", "1", "--no-robots", cwd=tmp_path, timeout=300,
        )  # fmt: skip
    crawl = crawl_id_for(url)
    assert run.code == 3, run.stderr
    assert "--crawl-id ID" not in run.stderr
    assert (
        f"1 page(s) of crawl {crawl} dead-lettered: see `invcrawl dlq list --crawl-id {crawl}`; "
        f"fix and `invcrawl dlq redrive --all --crawl-id {crawl}`"
    ) in run.stderr
    assert len(keys_of(tmp_path / "dead.jsonl")) == site.entries


def test_a_consumer_that_cannot_start_stops_the_run_in_one_line(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child that refuses its command line (exit 2) would refuse it again: the run
    stops at once with its error, instead of restarting it again and again."""
    started = tmp_path / "started"
    refuse = (
        "import sys; open(sys.argv[1], 'a').write('x');"
        "print('invcrawl: error: no such file or directory: /srv/site', file=sys.stderr);"
        "sys.exit(2)"
    )

    def child_argv(command: str, *extra: str) -> list[str]:
        return [sys.executable, "-c", refuse, str(started)]

    monkeypatch.setattr(crawl_module, "child_argv", child_argv)
    (tmp_path / "out").mkdir()
    config = load_config(
        {
            "redis": redis_url,
            "data_dir": tmp_path / "data",
            "out_dir": tmp_path / "out",
            "consumers": 2,
            "progress": "none",
        },
        {},
    )
    run = CrawlRun(config, [(str(tmp_path), "refused")])
    with pytest.raises(UserError, match=r"consumer \d could not start: no such file or dir"):
        asyncio.run(run.run())
    assert len(started.read_text()) <= 2  # each consumer started once, never restarted

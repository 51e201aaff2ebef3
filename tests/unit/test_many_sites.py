"""Any number of sites (issue 39): ``invcrawl crawl`` hands its producer child the sites
and its consumers the crawl ids in files, not on their command lines (one argument is
128 KiB at most on Linux, all of them 2 MiB), and the children read back exactly what
the supervisor planned. 50,000 sites, planned and handed over without crawling any."""

from __future__ import annotations

from pathlib import Path

import pytest

from invcrawl.children import crawl_ids_args, sites_args
from invcrawl.commands.crawling import _crawl_ids_file, _sites
from invcrawl.common.settings.config import Config
from invcrawl.common.site import plan_sites

COUNT = 50_000


def test_fifty_thousand_sites_reach_the_children_in_files(tmp_path: Path) -> None:
    sites = plan_sites([f"http://docs-{i}.example.test/en/latest/" for i in range(COUNT)])
    producer = sites_args([site for site, _ in sites], tmp_path)
    consumer = crawl_ids_args([crawl_id for _, crawl_id in sites], tmp_path)
    assert producer[0] == "--sites" and len(producer) == 2
    assert consumer[0] == "--crawl-ids" and len(consumer) == 2
    assert sum(len(arg) for arg in producer + consumer) < 4096  # whatever the count

    # what the children's handlers read back: the same sites, the same crawls, in order
    assert _sites(Config(sites_file=Path(producer[1]))) == sites
    ids = _crawl_ids_file(Config(crawl_ids_file=Path(consumer[1])))
    assert ids == tuple(crawl_id for _, crawl_id in sites)


def test_a_site_that_would_not_read_back_from_a_file_stays_on_the_command_line(
    tmp_path: Path,
) -> None:
    sites = ["/docs/a #1", "http://b.test/"]  # " #": a comment in a sites file
    assert sites_args(sites, tmp_path) == ["--", *sites]
    assert crawl_ids_args(["a"], tmp_path) == ["--crawl-id", "a"]


def test_the_output_files_of_many_sites_fit_under_a_low_soft_limit(tmp_path: Path) -> None:
    """Each crawl's ``.part`` file stays open until final: the run raises its soft limit
    on open files for them (up to the hard one), so 2,000 sites fit under a soft 1,024."""
    import resource

    from invcrawl.frontier.connection import connect
    from invcrawl.frontier.session import Frontier
    from invcrawl.output.crawl_files import CrawlOutputs

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 4_096:
        pytest.skip(f"the hard limit on open files is {hard}")
    frontier = Frontier(connect("redis://127.0.0.1:1/0"))  # (never asked: no command sent)
    sessions = {f"c{i:04d}": frontier.crawl(f"c{i:04d}") for i in range(2_000)}
    outputs = CrawlOutputs(sessions, lambda c: tmp_path / f"{c}.jsonl", print)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1_024, hard))
    try:
        outputs.open(0)
        assert len(outputs.exports) == 2_000
    finally:
        outputs.abandon()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert not list(tmp_path.iterdir())

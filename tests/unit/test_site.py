from __future__ import annotations

from pathlib import Path

import pytest

from invcrawl.common.site import SiteError, crawl_id_for, inventory_url, parse_sites_file


@pytest.mark.parametrize(
    ("site", "expected"),
    [
        ("https://docs.python.org/3/", "https://docs.python.org/3/objects.inv"),
        ("https://docs.python.org/3", "https://docs.python.org/3/objects.inv"),
        ("http://h:8080/x/objects.inv", "http://h:8080/x/objects.inv"),
        ("http://h/docs/index.html", "http://h/docs/objects.inv"),
        ("http://h/docs/?q=1#frag", "http://h/docs/objects.inv"),
    ],
)
def test_inventory_url_for_urls(site: str, expected: str) -> None:
    assert inventory_url(site) == expected


def test_inventory_url_for_local_paths(tmp_path: Path) -> None:
    (tmp_path / "objects.inv").write_bytes(b"")
    assert inventory_url(str(tmp_path)) == (tmp_path / "objects.inv").as_uri()
    assert inventory_url(str(tmp_path / "objects.inv")) == (tmp_path / "objects.inv").as_uri()
    assert inventory_url(tmp_path.as_uri()) == (tmp_path / "objects.inv").as_uri()


@pytest.mark.parametrize(
    ("site", "message"),
    [
        ("", "empty SITE"),
        ("/no/such/dir", "no such file or directory"),
        ("docs.python.org/3", "did you mean https://docs.python.org/3"),
        ("ftp://h/x", "unsupported URL scheme"),
        ("http:///x", "no host"),
    ],
)
def test_bad_sites_give_one_clear_line(site: str, message: str) -> None:
    with pytest.raises(SiteError, match=message):
        inventory_url(site)


def test_crawl_ids_are_readable_and_stable(tmp_path: Path) -> None:
    assert crawl_id_for("https://docs.python.org/3/") == "docs.python.org-3"
    assert crawl_id_for("http://127.0.0.1:8000/") == "127.0.0.1-8000"
    site = tmp_path / "python3.11" / "html"
    site.mkdir(parents=True)
    assert crawl_id_for(str(site)) == "python3.11-html"


def test_origin_of_spells_out_the_default_port() -> None:
    from invcrawl.frontier.hosts import origin_of

    assert origin_of("https://docs.python.org/3/library/json.html#x") == (
        "https://docs.python.org:443"
    )
    assert origin_of("http://127.0.0.2:8080/a/b.html") == "http://127.0.0.2:8080"
    assert origin_of("HTTP://Example.ORG/") == "http://example.org:80"
    assert origin_of("http://[::1]:81/") == "http://[::1]:81"
    assert origin_of("file:///usr/share/doc/x.html") is None
    assert origin_of("http://host:notaport/") is None


def test_a_sites_file_has_one_whole_site_per_line() -> None:
    """A line is one site, spaces and all; `#` starts a comment at the start of a line or
    after white space, not inside a site."""
    text = (
        "# the sites\n"
        "   \n"
        "/srv/docs/site with space\n"
        "/srv/docs/other site   # a comment after it\n"
        "\t# an indented comment\n"
        "/srv/docs/v#2\n"
        "https://docs.example.org/en/#frag  \n"
    )
    assert parse_sites_file(text) == [
        "/srv/docs/site with space",
        "/srv/docs/other site",
        "/srv/docs/v#2",
        "https://docs.example.org/en/#frag",
    ]

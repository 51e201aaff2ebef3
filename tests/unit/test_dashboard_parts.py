"""The dashboard's pure parts: masking URLs, the throughput history, who may look, and
the page's script allowed by its Content-Security-Policy."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest

from invcrawl.cli import main
from invcrawl.common.settings.config import ConfigError, load_config
from invcrawl.dashboard.access import access_secret, is_loopback
from invcrawl.dashboard.server import load_page
from invcrawl.dashboard.snapshot import Throughput, page_data
from invcrawl.frontier.summary import CrawlSummary, FleetStatus


def test_the_page_data_masks_every_password() -> None:
    fleet = {
        "crawls": [
            {
                "crawl_id": "c",
                "pages_done": 1,
                "site": "https://u:hunter2@docs.test/",
                "error": "HTTP 401 from https://u:hunter2@docs.test/objects.inv",
                "counters": {"pages_done": 1},
            }
        ],
        "dead_letters": [
            {"crawl_id": "c", "url": "https://u:hunter2@docs.test/a.html", "error": "x"}
        ],
        "server_time": 1,
    }
    data = page_data(
        FleetStatus.from_dict(fleet), "redis://reader:hunter2@redis:6379/0", Throughput()
    )
    assert "hunter2" not in str(data)
    assert data["redis"] == "redis://reader:***@redis:6379/0"
    assert data["crawls"][0]["site"] == "https://u:***@docs.test/"
    assert "counters" not in data["crawls"][0]


def test_throughput_stacks_the_busiest_crawls_and_sums_the_rest() -> None:
    tp = Throughput(window_s=10, bucket_s=2, top=2)
    assert tp.view()["series"] == []
    t0 = 1_000_000
    crawls = {"a": 0, "b": 0, "c": 0}
    tp.add(t0, [CrawlSummary(c, pages_done=n) for c, n in crawls.items()])
    for step in range(1, 6):  # one sample a second: a +4/s, b +2/s, c +1/s
        crawls = {"a": 4 * step, "b": 2 * step, "c": step}
        tp.add(t0 + step * 1000, [CrawlSummary(c, pages_done=n) for c, n in crawls.items()])
    view = tp.view()
    assert view["end"] == t0 + 5000 and view["bucket_s"] == 2
    series = {s["crawl_id"]: s["rates"] for s in view["series"]}
    assert set(series) == {"a", "b"}
    assert series["a"] == [0.0, 0.0, 2.0, 4.0, 4.0]  # the oldest bucket holds one sample
    assert view["other"] == [0.0, 0.0, 0.5, 1.0, 1.0]
    # samples older than the window are dropped; a counter going down is no progress
    tp.add(t0 + 60_000, [CrawlSummary("a", pages_done=1)])
    assert tp.view()["series"] == []


def test_who_may_look() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    assert access_secret(load_config({}, {})) is None
    env = {"INVCRAWL_DASHBOARD_TOKEN": "t0k"}
    assert access_secret(load_config({"bind": "0.0.0.0"}, env)) == "t0k"
    assert access_secret(load_config({}, env)) == "t0k"  # asked for on loopback too
    with pytest.raises(ConfigError, match="INVCRAWL_DASHBOARD_TOKEN"):
        access_secret(load_config({"bind": "0.0.0.0"}, {}))
    reader = {"INVCRAWL_REDIS": "redis://reader:pw@redis:6379/0"}
    assert access_secret(load_config({"bind": "0.0.0.0"}, reader)) == "pw"
    quoted = {"INVCRAWL_REDIS": "redis://reader:p%40ss%3Aw@redis:6379/0"}
    assert access_secret(load_config({"bind": "0.0.0.0"}, quoted)) == "p@ss:w"
    default_user = {"INVCRAWL_REDIS": "redis://:pw@redis:6379/0"}
    with pytest.raises(ConfigError):
        access_secret(load_config({"bind": "0.0.0.0"}, default_user))
    assert "t0k" not in repr(load_config({}, env))


def test_an_exposed_dashboard_without_token_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INVCRAWL_DASHBOARD_TOKEN", raising=False)
    code = main(["dashboard", "--bind", "0.0.0.0", "--redis", "redis://127.0.0.1:1/0"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--token" in err


def test_the_page_script_is_allowed_by_its_policy_and_loads_nothing_external() -> None:
    html, csp = load_page()
    (script,) = re.findall(rb"<script>(.*?)</script>", html, re.S)
    digest = base64.b64encode(hashlib.sha256(script).digest()).decode()
    assert f"'sha256-{digest}'" in csp and "default-src 'none'" in csp
    assert not re.search(rb"(src|href)=\"(https?:)?//", html), "no CDN, no external asset"

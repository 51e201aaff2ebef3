"""Prometheus against a real crawl: Debian's ``prometheus`` scrapes a consumer
(``consume --metrics-port``) and the dashboard's ``/metrics`` (with its token) through a
scrape configuration derived from the shipped deploy/prometheus/prometheus.yml, and its
HTTP API answers what Redis recorded: pages by outcome, items by status, claims,
commit and fetch histograms, in-flight gauges back to zero, the fleet's gauges. Every
expression of the shipped Grafana dashboard (deploy/grafana/invcrawl.json) is run
through the same Prometheus."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from invcrawl.frontier.keys import CrawlKeys
from invcrawl.localredis.server import free_port
from support.cli import REPO, clean_env
from support.crawl import build_site, wait_for
from support.httpserver import serve

pytestmark = pytest.mark.e2e

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
CRAWL = "prom"
TOKEN = "scrape-token-0123"


@pytest.fixture
def prometheus_binary() -> str:
    if not Path(PROMETHEUS).is_file():
        pytest.skip("Debian's prometheus is not installed (apt-get install prometheus)")
    return PROMETHEUS


class Procs:
    """Processes this test started, stopped by pid at the end."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.tmp / f"{name}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(argv, cwd=self.tmp, env=clean_env(), stdout=log, stderr=log)
        log.close()
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text(errors="replace")

    def address(self, name: str, pattern: str) -> str:
        def found() -> str | None:
            match = re.search(pattern, self.log(name))
            return match[1] if match else None

        return str(wait_for(found, 60, f"{name} to listen", diagnose=lambda: self.log(name)))

    def stop(self, name: str, signum: int) -> int:
        proc = self.procs.pop(name)
        proc.send_signal(signum)
        return proc.wait(30)

    def close(self) -> None:
        for proc in self.procs.values():
            proc.kill()
            proc.wait(10)


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Procs]:
    p = Procs(tmp_path)
    try:
        yield p
    finally:
        p.close()


def invcrawl(*args: str) -> list[str]:
    return [sys.executable, "-m", "invcrawl", *args]


def scrape_config(consumer: str, dashboard: str, token_file: Path) -> dict[str, Any]:
    """The shipped configuration, its targets pointed at this test's processes."""
    config = yaml.safe_load((REPO / "deploy/prometheus/prometheus.yml").read_text())
    config["global"]["scrape_interval"] = "1s"
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert set(jobs) == {"invcrawl-consumer", "invcrawl-dashboard"}
    consumer_job = jobs["invcrawl-consumer"]
    assert consumer_job.pop("dns_sd_configs")[0]["port"] == 9108  # compose's port
    consumer_job["static_configs"] = [{"targets": [consumer]}]
    dashboard_job = jobs["invcrawl-dashboard"]
    dashboard_job["static_configs"] = [{"targets": [dashboard]}]
    for job in (consumer_job, dashboard_job):  # both ask for the token (compose's binds)
        assert job["authorization"]["type"] == "Bearer"
        job["authorization"]["credentials_file"] = str(token_file)
    return config


class Api:
    def __init__(self, base: str) -> None:
        self.base = base

    def query(self, expr: str) -> list[dict[str, Any]]:
        url = f"{self.base}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.load(response)
        assert body["status"] == "success", (expr, body)
        return list(body["data"]["result"])

    def value(self, expr: str) -> float | None:
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else None

    def by(self, label: str, expr: str) -> dict[str, float]:
        return {r["metric"].get(label, ""): float(r["value"][1]) for r in self.query(expr)}


def test_prometheus_scrapes_a_consumer_and_the_dashboard(
    prometheus_binary: str, redis_url: str, tmp_path: Path, procs: Procs
) -> None:
    site = build_site(tmp_path / "site", pages=30)
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    keys = CrawlKeys(CRAWL)
    with serve(site.root) as http:
        produced = subprocess.run(
            invcrawl("produce", http.url, "--redis", redis_url, "--crawl-id", CRAWL),
            cwd=tmp_path,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert produced.returncode == 0, produced.stderr
        procs.start(
            "consumer",
            invcrawl(
                "consume", "--redis", redis_url, "--metrics-port", "0", "--metrics-token", TOKEN
            ),
        )
        procs.start(
            "dashboard",
            invcrawl("dashboard", "--redis", redis_url, "--port", "0", "--token", TOKEN),
        )
        consumer = procs.address("consumer", r"metrics at http://([\d.:]+)/metrics")
        dashboard = procs.address("dashboard", r"dashboard: http://([\d.:]+)/")
        token_file = tmp_path / "dashboard-token"
        token_file.write_text(TOKEN)
        config = tmp_path / "prometheus.yml"
        config.write_text(yaml.safe_dump(scrape_config(consumer, dashboard, token_file)))
        if Path(PROMTOOL).is_file():
            check = subprocess.run(
                [PROMTOOL, "check", "config", str(config)],
                capture_output=True,
                text=True,
                check=False,
            )
            assert check.returncode == 0, check.stdout + check.stderr
        port = free_port()
        procs.start(
            "prometheus",
            [
                prometheus_binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
        )
        api = Api(f"http://127.0.0.1:{port}")
        wait_for(
            lambda: r.hget(keys.meta, "state") == "finished",
            120,
            "the crawl to finish",
            interval=0.2,
            diagnose=lambda: procs.log("consumer")[-2000:],
        )
        stats = r.hgetall(keys.stats)
        tasks = int(r.hget(keys.meta, "tasks") or 0)
        assert tasks == site.tasks

        def scraped_after_the_end() -> bool:
            try:
                pages = api.value(f'sum(invcrawl_pages_total{{crawl="{CRAWL}"}})')
                done = api.value(f'invcrawl_crawl_pages_done{{crawl="{CRAWL}"}}')
                # (a scrape may read the last page counted but not yet out of flight)
                flying = api.query("invcrawl_pages_in_flight")
            except OSError:  # Prometheus still starting
                return False
            return pages == tasks and done == tasks and not flying

        wait_for(
            scraped_after_the_end,
            120,
            "Prometheus to scrape the finished crawl",
            interval=0.5,
            diagnose=lambda: procs.log("prometheus")[-3000:],
        )
        # Both targets up, the dashboard's with its token.
        assert api.by("job", "up") == {"invcrawl-consumer": 1.0, "invcrawl-dashboard": 1.0}
        # The consumer's counters are what Redis recorded.
        outcomes = api.by("outcome", f'sum by (outcome) (invcrawl_pages_total{{crawl="{CRAWL}"}})')
        assert outcomes == {
            name.removeprefix("pages:"): float(n)
            for name, n in stats.items()
            if name.startswith("pages:")
        }
        statuses = api.by("status", f'sum by (status) (invcrawl_items_total{{crawl="{CRAWL}"}})')
        assert statuses == {s: float(n) for s, n in site.by_status.items() if n}
        assert sum(statuses.values()) == site.entries
        changes = api.by(
            "change", f'sum by (change) (invcrawl_item_changes_total{{crawl="{CRAWL}"}})'
        )
        assert changes == {"new": float(site.entries)}
        assert api.value(f'sum(invcrawl_claims_total{{crawl="{CRAWL}"}})') == int(stats["claims"])
        assert api.value("sum(invcrawl_commit_seconds_count)") == tasks
        fetched = int(stats["pages:fetched"])
        assert api.value("sum(invcrawl_extract_seconds_count)") == fetched
        assert (api.value("sum(invcrawl_fetch_seconds_count)") or 0) >= fetched
        # all settled: no host has a series left (the offsite page's host never had one:
        # it is never fetched; issue 36)
        assert api.by("host", "invcrawl_pages_in_flight") == {}
        assert api.value("sum(invcrawl_fenced_commits_total) or vector(0)") == 0
        assert api.value("sum(invcrawl_leases_lost_total) or vector(0)") == 0
        assert api.value("invcrawl_redis_errors_total") == 0
        assert (api.value('process_resident_memory_bytes{job="invcrawl-consumer"}') or 0) > 0
        # The fleet's gauges, from the dashboard.
        assert api.value("invcrawl_fleet_up") == 1
        assert api.value(f'invcrawl_crawl_info{{crawl="{CRAWL}",state="finished"}}') == 1
        assert api.value(f'invcrawl_crawl_queue_depth{{crawl="{CRAWL}"}}') == 0
        assert api.value(f'invcrawl_crawl_pages{{crawl="{CRAWL}"}}') == tasks
        assert api.value("invcrawl_consumers_alive") == 1
        assert api.value("invcrawl_hosts_blocked") == 0
        dashboard_items = api.by("status", f'invcrawl_crawl_items{{crawl="{CRAWL}"}}')
        assert {s: n for s, n in dashboard_items.items() if n} == statuses
        # Every expression of the Grafana dashboard runs; those of this crawl's metrics
        # have data (the refresh schedule has none: this crawl is not on one; nor pages
        # in flight: none are, once it is done). A rate needs two samples of each series.
        wait_for(
            lambda: (api.value("min(count_over_time(invcrawl_pages_total[1m]))") or 0) >= 2,
            60,
            "a second scrape",
            interval=0.5,
        )
        for expr in grafana_expressions():
            result = api.query(expr.replace("$__rate_interval", "1m").replace("$crawl", ".*"))
            if "refresh" not in expr and "pages_in_flight" not in expr:
                assert result, expr
        # SIGTERM and SIGINT stop them gracefully, with 143 and 130.
        assert procs.stop("consumer", signal.SIGTERM) == 143, procs.log("consumer")[-2000:]
        assert procs.stop("dashboard", signal.SIGINT) == 130, procs.log("dashboard")[-2000:]
    r.close()


def grafana_expressions() -> list[str]:
    dashboard = json.loads((REPO / "deploy/grafana/invcrawl.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert len(exprs) >= 20
    return exprs


def test_the_monitoring_override_validates_and_mounts_what_deploy_ships() -> None:
    """deploy/docker-compose.monitoring.yml over the compose file: valid for
    docker-compose, Prometheus reads the shipped scrape config and Grafana provisions the
    shipped dashboard and its data source."""
    compose = shutil.which("docker-compose")
    if compose is None:
        pytest.skip("docker-compose is not installed")
    env = {
        "PATH": "/usr/bin:/bin",
        **{
            f"INVCRAWL_REDIS_{r}_PASSWORD": "x" * 16
            for r in ("PRODUCER", "CONSUMER", "READER", "EXPORTER")
        },
        "INVCRAWL_DASHBOARD_TOKEN": TOKEN,
        "INVCRAWL_GRAFANA_PASSWORD": "grafana-password",
    }
    deploy = REPO / "deploy"
    proc = subprocess.run(
        [compose, "-f", str(deploy / "docker-compose.yml"), "-f",
         str(deploy / "docker-compose.monitoring.yml"), "config"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    services = yaml.safe_load(proc.stdout)["services"]
    mounts = {
        name: {
            str(v["source"] if isinstance(v, dict) else v.split(":")[0])
            for v in services[name]["volumes"]
        }
        for name in ("prometheus", "grafana")
    }
    assert str(deploy / "prometheus" / "prometheus.yml") in mounts["prometheus"]
    assert str(deploy / "grafana" / "invcrawl.json") in mounts["grafana"]
    assert str(deploy / "grafana" / "provisioning") in mounts["grafana"]
    consumer = services["consumer"]["environment"]
    assert consumer["INVCRAWL_METRICS_PORT"] == "9108" and consumer["INVCRAWL_BIND"] == "0.0.0.0"
    assert consumer["INVCRAWL_METRICS_TOKEN"] == TOKEN  # beyond loopback: the same token
    datasource = yaml.safe_load(
        (deploy / "grafana/provisioning/datasources/prometheus.yml").read_text()
    )
    (source,) = datasource["datasources"]
    dashboard = json.loads((deploy / "grafana" / "invcrawl.json").read_text())
    choice = next(v for v in dashboard["templating"]["list"] if v["name"] == "datasource")
    assert choice["current"]["value"] == source["uid"]

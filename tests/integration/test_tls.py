"""Redis over TLS: a CA and certificates made with the openssl CLI, Debian's
redis-server (linked with OpenSSL) on a TLS-only port that requires client
certificates, and a whole crawl through ``rediss://`` with ``--redis-ca``,
``--redis-cert`` and ``--redis-key`` (and the ``INVCRAWL_*`` variables)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from invcrawl.localredis.server import free_port
from support.cli import clean_env, invcrawl
from support.crawl import build_site
from support.redisproc import LoggedRedisServer, system_redis_server

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path  # a CA that signed nothing of this server's


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _ca(folder: Path, name: str) -> tuple[Path, Path]:
    key, cert = folder / f"{name}.key", folder / f"{name}.crt"
    _openssl("genrsa", "-out", key.name, "2048", cwd=folder)
    _openssl(
        "req", "-x509", "-new", "-key", key.name, "-sha256", "-days", "2",
        "-subj", f"/CN={name}", "-out", cert.name, cwd=folder,
    )  # fmt: skip
    return key, cert


def _signed(folder: Path, name: str, ca_key: Path, ca_cert: Path, ext: str) -> tuple[Path, Path]:
    key, csr, cert = folder / f"{name}.key", folder / f"{name}.csr", folder / f"{name}.crt"
    (folder / f"{name}.ext").write_text(ext)
    _openssl("genrsa", "-out", key.name, "2048", cwd=folder)
    _openssl("req", "-new", "-key", key.name, "-subj", f"/CN={name}", "-out", csr.name, cwd=folder)
    _openssl(
        "x509", "-req", "-in", csr.name, "-CA", ca_cert.name, "-CAkey", ca_key.name,
        "-CAcreateserial", "-days", "2", "-sha256", "-extfile", f"{name}.ext", "-out", cert.name,
        cwd=folder,
    )  # fmt: skip
    key.chmod(0o600)
    return key, cert


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    if not shutil.which("openssl"):
        pytest.skip("needs the openssl command")
    folder = tmp_path_factory.mktemp("pki")
    ca_key, ca_cert = _ca(folder, "ca")
    server_key, server_cert = _signed(
        folder, "server", ca_key, ca_cert, "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
    )
    client_key, client_cert = _signed(
        folder, "client", ca_key, ca_cert, "extendedKeyUsage=clientAuth\n"
    )
    _, other_ca = _ca(folder, "other")
    return Pki(ca_cert, server_cert, server_key, client_cert, client_key, other_ca)


@pytest.fixture
def tls_redis(tmp_path: Path, pki: Pki) -> Iterator[LoggedRedisServer]:
    binary = system_redis_server()
    if binary is None:
        pytest.skip("needs redis-server")
    port = free_port()
    server = LoggedRedisServer(
        tmp_path / "redis",
        port=port,
        binary=binary,
        extra=[
            "--port", "0",  # TLS only: no plain-text port at all
            "--tls-port", str(port),
            "--tls-cert-file", str(pki.server_cert),
            "--tls-key-file", str(pki.server_key),
            "--tls-ca-cert-file", str(pki.ca),
            "--tls-auth-clients", "yes",
        ],
    )  # fmt: skip
    try:
        server.start()
    except Exception as exc:  # a build without TLS refuses --tls-port
        pytest.skip(f"{binary} cannot serve TLS: {exc}")
    yield server
    server.stop()


def test_a_crawl_over_tls(tmp_path: Path, pki: Pki, tls_redis: LoggedRedisServer) -> None:
    site = build_site(tmp_path / "site", pages=12)
    url = f"rediss://127.0.0.1:{tls_redis.port}/0"
    tls = ["--redis-ca", str(pki.ca), "--redis-cert", str(pki.client_cert)]
    tls += ["--redis-key", str(pki.client_key)]
    out = tmp_path / "items.jsonl"
    result = invcrawl(
        "crawl", str(site.root), "--redis", url, *tls, "-o", str(out), "--consumers", "2",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["key"] for r in rows} == site.keys
    # The same through the variables, for a read-only tool.
    env = clean_env(
        INVCRAWL_REDIS=url,
        INVCRAWL_REDIS_CA=str(pki.ca),
        INVCRAWL_REDIS_CERT=str(pki.client_cert),
        INVCRAWL_REDIS_KEY=str(pki.client_key),
    )
    status = invcrawl("status", "--json", cwd=tmp_path, env=env)
    assert status.code == 0, status.stderr
    (crawl,) = json.loads(status.stdout)["crawls"]
    assert crawl["state"] == "finished"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--redis-ca", "{other_ca}", "--redis-cert", "{cert}", "--redis-key", "{key}"], "certif"),
        (["--redis-ca", "{ca}"], "certificate required"),  # no client certificate
        (["--redis-ca", "{tmp}/missing.pem"], "--redis-ca"),
    ],
)
def test_tls_mistakes_fail_at_once_in_one_line(
    tmp_path: Path, pki: Pki, tls_redis: LoggedRedisServer, args: list[str], fragment: str
) -> None:
    values = {
        "ca": pki.ca,
        "other_ca": pki.other_ca,
        "cert": pki.client_cert,
        "key": pki.client_key,
        "tmp": tmp_path,
    }
    url = f"rediss://127.0.0.1:{tls_redis.port}/0"
    # Waiting cannot cure it: with a wait far beyond the subprocess's timeout, a command
    # that kept waiting would be killed there and fail this test (it may wait one round
    # when the server's first answer is a reset, then fails at the TLS alert).
    result = invcrawl(
        "status", "--redis", url, "--redis-wait", "3600",
        *[a.format(**values) for a in args], cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert result.code in (1, 2), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = result.error_lines
    assert fragment in line, line


def test_tls_options_need_a_rediss_url(tmp_path: Path, pki: Pki) -> None:
    result = invcrawl(
        "status", "--redis", "redis://127.0.0.1:1/0", "--redis-ca", str(pki.ca), cwd=tmp_path
    )
    assert result.code == 2 and "need(s) a rediss:// Redis URL" in result.stderr, result.stderr

"""Serve a directory over loopback HTTP with Debian's nginx (a fast static server), for
benchmarks and manual end-to-end runs.

    python -m bench.nginx /usr/share/doc/python3.11/html   # prints the URL, Ctrl-C stops

``gzip_static`` serves the pre-compressed pages Debian ships (``changelog.html.gz``)
under their plain name, as a docs host would.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

CONF = """
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    types {{ text/html html; text/css css; application/javascript js;
             application/octet-stream inv; }}
    default_type application/octet-stream;
    client_body_temp_path {prefix}/tmp;
    proxy_temp_path {prefix}/tmp;
    fastcgi_temp_path {prefix}/tmp;
    uwsgi_temp_path {prefix}/tmp;
    scgi_temp_path {prefix}/tmp;
    log_format timing '$msec $request_time $server_addr $status $request_uri';
    {access_log}
    server {{
        {listen}
        root {root};
        gzip_static always;
        gunzip on;
        location / {{ try_files $uri $uri/index.html $uri.gz =404; }}
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def find_nginx() -> str:
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("nginx not found: apt-get install nginx")


@contextlib.contextmanager
def serve(
    root: Path, hosts: tuple[str, ...] = ("127.0.0.1",), access_log: Path | None = None
) -> Iterator[str]:
    """Yield the base URL of ``root`` served by a private nginx on the first of ``hosts``
    (the same port on every loopback address of ``hosts``: distinct hosts to a crawler);
    stop it afterwards. ``access_log``: one line per request, ``$msec $request_time
    $server_addr $status $request_uri`` (end time and duration: overlaps per host)."""
    prefix = Path(tempfile.mkdtemp(prefix="invcrawl-nginx-"))
    (prefix / "tmp").mkdir()
    port = free_port()
    conf = prefix / "nginx.conf"
    conf.write_text(
        CONF.format(
            prefix=prefix,
            port=port,
            root=Path(root).resolve(),
            listen=" ".join(f"listen {host}:{port};" for host in hosts),
            access_log=f"access_log {access_log} timing;" if access_log else "access_log off;",
        )
    )
    proc = subprocess.Popen(
        [find_nginx(), "-c", str(conf), "-p", str(prefix)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise SystemExit(f"nginx failed: {err}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        if proc.poll() is None:
            proc.kill()
        shutil.rmtree(prefix, ignore_errors=True)


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/doc/python3.11/html")
    with serve(root) as url:
        print(url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()


if __name__ == "__main__":
    main()

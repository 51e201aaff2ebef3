"""Secrets are never printed, whatever their characters: a property test over generated
passwords (quotes, spaces, ``/ # ? @ :`` and non-ASCII) through every path a Redis URL's
password can reach a person: the configuration, the one-line error, the "waiting for
Redis" line and its failure, the dashboard's header and data, log records, the command
line of a child process. The URL must also still mean what was typed: redis-py gets the
password whole (no "Port could not be cast" built from a piece of it)."""

from __future__ import annotations

import asyncio
import io
import logging
import socket
from contextlib import redirect_stderr

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from invcrawl.cli import build_parser, cli_values
from invcrawl.common.settings.config import load_config
from invcrawl.dashboard.snapshot import Throughput, page_data
from invcrawl.errors import fail
from invcrawl.frontier.connection import connect
from invcrawl.frontier.startup import RedisUnavailable, display_url, wait_for_redis
from invcrawl.frontier.summary import FleetStatus
from invcrawl.process.secrets import MaskingRecordFactory, has_password, mask_secrets, mask_url

# Every character a URL parser treats specially, quotes and spaces, and some text.
SPECIAL = list("'\" /#?@:&=+;,!$*()[]{}\\^`|~-._<>")
PASSWORDS = st.text(
    alphabet=st.sampled_from(SPECIAL)
    | st.characters(min_codepoint=0x30, max_codepoint=0x7A)
    | st.sampled_from(list("éß中€")),
    min_size=8,
    max_size=32,
).filter(lambda p: p.strip() == p)
USERS = st.sampled_from(["", "invcrawl-consumer", "u"])


# Bound and never listening, for the whole session: connections to it are refused, and
# no other process (a test's redis-server on a free port) can take it meanwhile.
_HELD = socket.socket()
_HELD.bind(("127.0.0.1", 0))
PORT = int(_HELD.getsockname()[1])


def url_of(user: str, password: str) -> str:
    return f"redis://{user}:{password}@127.0.0.1:{PORT}/0"


def messages(url: str) -> list[str]:
    """Every text a person may see about ``url`` in a process configured with it."""
    config = load_config({}, {"INVCRAWL_REDIS": url})
    assert config.redis is not None
    shown = [
        mask_url(url),
        mask_url(config.redis),
        display_url(config.redis),
        mask_secrets(f"cannot connect to Redis at {url}: Connection refused"),
        mask_secrets(f"{{'REDIS_URL': '{config.redis}'}}"),
        page_data(FleetStatus(crawls=[]), config.redis, Throughput())["redis"],
    ]
    err = io.StringIO()
    with redirect_stderr(err):
        fail(f"Redis at {url} refused: NOAUTH")
    shown.append(err.getvalue())
    said: list[str] = []

    async def wait() -> None:
        with pytest.raises(RedisUnavailable) as caught:
            await wait_for_redis(config.redis or "", 0.05, said.append)
        said.append(str(caught.value))

    asyncio.run(wait())
    shown += said
    record = MaskingRecordFactory(logging.LogRecord)(
        "t", logging.ERROR, __file__, 1, "using %s and %s", (url, config.redis), None
    )
    shown.append(record.getMessage())
    return shown


@settings(max_examples=60, deadline=None)
@given(user=USERS, password=PASSWORDS)
def test_no_message_shows_a_password(user: str, password: str) -> None:
    # A password that is a piece of every message anyway ("invcrawl") proves nothing.
    assume(not any(password in m for m in messages(url_of(user, "PLACEHOLDER-77"))))
    url = url_of(user, password)
    for text in messages(url):
        assert password not in text, text
        assert "***" in text or "Connection refused" in text or "refused" in text, text
    assert has_password(url)  # so a child gets it in its environment, not on argv


@settings(max_examples=60, deadline=None)
@given(user=USERS, password=PASSWORDS)
def test_the_url_still_means_the_password_typed(user: str, password: str) -> None:
    url = url_of(user, password)
    from_env = load_config({}, {"INVCRAWL_REDIS": url})
    from_flag = load_config(cli_values(build_parser().parse_args(["status", "--redis", url])), {})
    for config in (from_env, from_flag):
        client = connect(config.redis or "")
        kwargs = client.connection_pool.connection_kwargs
        assert kwargs["password"] == password
        assert kwargs["host"] == "127.0.0.1" and kwargs["port"] == PORT
        assert kwargs.get("username") == (user or None)
        asyncio.run(client.aclose())

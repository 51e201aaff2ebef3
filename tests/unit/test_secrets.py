"""Passwords of Redis and proxy URLs never reach a message, a log line or Redis."""

from __future__ import annotations

import logging

import pytest

from invcrawl.common.settings.config import SETTINGS_VARIABLE, ConfigError, load_config
from invcrawl.process.secrets import MaskingRecordFactory, has_password, mask_secrets, mask_url


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("redis://user:s3cret@127.0.0.1:1/0", "redis://user:***@127.0.0.1:1/0"),
        ("rediss://:s3cret@h:6380", "rediss://:***@h:6380"),
        ("at redis://:p@ss:w@h:1/0: refused", "at redis://:***@h:1/0: refused"),
        ("redis://h:6379/0?password=s3cret&db=1", "redis://h:6379/0?password=***&db=1"),
        ("proxy http://u:pw@proxy:3128 failed", "proxy http://u:***@proxy:3128 failed"),
        ("{'REDIS_URL': 'redis://u:pw@h/0'}", "{'REDIS_URL': 'redis://u:***@h/0'}"),
        ("AUTH producer s3cret", "AUTH ***"),
        ("Proxy-Authorization: Basic dXNlcjpwdw==", "Proxy-Authorization: Basic ***"),
    ],
)
def test_passwords_are_masked(text: str, masked: str) -> None:
    assert mask_secrets(text) == masked
    assert "s3cret" not in mask_secrets(text)


@pytest.mark.parametrize(
    "text",
    [
        "redis://127.0.0.1:6379/0",
        "redis://user:@h/0",
        "unix:///run/redis.sock",
        "https://docs.example.org/a:b@c",
        "mail me at a@b.c from redis://h:1/0",
        "",
    ],
)
def test_text_without_a_password_is_unchanged(text: str) -> None:
    assert mask_secrets(text) == text
    assert not has_password(text)


def test_has_password() -> None:
    assert has_password("redis://u:p@h")
    assert mask_url("redis://u:p@h") == "redis://u:***@h"


def test_a_bad_variable_does_not_echo_the_password() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({}, {"INVCRAWL_REDIS": "mysql://u:s3cret@h"})
    assert "s3cret" not in str(caught.value) and "u:***@h" in str(caught.value)


def test_log_records_are_masked(caplog: pytest.LogCaptureFixture) -> None:
    previous = logging.getLogRecordFactory()
    logging.setLogRecordFactory(MaskingRecordFactory(previous))
    try:
        log = logging.getLogger("invcrawl.test")
        with caplog.at_level(logging.INFO):
            log.info("Overridden settings: %r", {"REDIS_URL": "redis://u:s3cret@h:1/0"})
            try:
                raise ValueError("bad url redis://u:s3cret@h")
            except ValueError:
                log.exception("failed")
        text = caplog.text
    finally:
        logging.setLogRecordFactory(previous)
    assert "s3cret" not in text
    assert "redis://u:***@h:1/0" in text and "bad url redis://u:***@h" in text


def test_a_password_never_goes_on_a_child_command_line() -> None:
    """`crawl` starts its consumers with their settings, the Redis URL among them, in
    their environment (any user of the machine can read a command line)."""
    from invcrawl.children import child_argv, child_env

    config = load_config({"redis": "redis://invcrawl-consumer:s3cret@h:6379/0"}, {})
    argv = child_argv("consume", "--burst")
    assert argv[-3:] == ["invcrawl", "consume", "--burst"]
    env = child_env(config, "consume")
    assert load_config({}, env).redis == config.redis
    embedded = child_env(config, "consume", embedded=True)
    assert "s3cret" not in embedded[SETTINGS_VARIABLE]

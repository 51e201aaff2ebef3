"""What the Redis user of a connection may do, found without changing anything.

The dashboard must not serve beyond loopback with a user that can write (a page that
leaked its session would hand over a writer). Redis tells a user its own rights only
through ``ACL`` commands a least-privilege user may not run, so each probe below is a
write command that changes nothing when it is allowed (it names a key that does not
exist, with options that make it a no-op) and is refused with ``NOPERM`` when it is
not. They cover every kind of write invcrawl's roles are given (docs/deploy.md):
strings, keys, hashes, streams (added to or trimmed) and scripts.
"""

from __future__ import annotations

import secrets

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from invcrawl.frontier.keys import PREFIX

# sha1 of the empty script: EVALSHA of it answers NOSCRIPT when allowed.
_NO_SCRIPT = "da39a3ee5e6b4b0d3255bfef95601890afd80709"


def _probes(key: str) -> list[tuple[str, ...]]:
    return [
        ("SET", key, "1", "XX"),  # only if it exists: it does not
        ("DEL", key),
        ("HDEL", key, "f"),
        ("XADD", key, "NOMKSTREAM", "*", "f", "v"),  # no stream is created
        ("XTRIM", key, "MAXLEN", "0"),
        ("EVALSHA", _NO_SCRIPT, "0"),
    ]


async def write_allowed(redis: Redis) -> str | None:
    """The first write command this connection's user may run (``"SET"``...), or None
    when Redis refuses every probe."""
    key = f"{PREFIX}:probe:{secrets.token_hex(8)}"  # never exists
    for probe in _probes(key):
        try:
            await redis.execute_command(*probe)  # type: ignore[no-untyped-call]
        except ResponseError as exc:  # NoPermissionError (NOPERM) is one too
            if str(exc).startswith("NOSCRIPT"):
                return probe[0]  # allowed to run scripts
            continue  # refused
        return probe[0]
    return None

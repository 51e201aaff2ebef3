"""The one way invcrawl runs its Lua scripts.

Each script in ``frontier/lua`` binds its fixed ``KEYS`` to named locals at its top::

    local meta, stats, task, seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

That line is the script's key contract: :class:`Scripts` reads the names from it, and
callers pass the fixed keys *by name* (a missing or unknown name is a bug, raised at
once), then any variable keys (per-slot queues, dedup buckets) in order. Every script is
prepended with ``_prelude.lua`` (server time, the layout check), itself after the
``META_FIELDS`` table generated from ``frontier/meta.py``. A caller whose slot
layout is stale gets one answer from every script, an error reply starting with
``STALE``, turned here into :class:`StaleLayout`.

Scripts are created on first use, so a process registers only the scripts it runs
(a consumer never loads the operator's ``reshard.lua``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from redis.asyncio import Redis
from redis.client import NEVER_DECODE
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError, ResponseError

from invcrawl.frontier.meta import lua_field_table

LUA_DIR = Path(__file__).with_name("lua")
PRELUDE = "_prelude"

# `local a, b,\n  c = KEYS[1], KEYS[2],\n  KEYS[3]` (the binding may wrap)
_BINDING = re.compile(r"^local\s+([\w\s,]+?)\s*=\s*((?:KEYS\[\d+\]\s*,\s*)*KEYS\[\d+\])", re.M)


class StaleLayout(RuntimeError):
    """The crawl was resharded under the caller: refresh the layout and call again."""


@dataclass(frozen=True, slots=True)
class ScriptSource:
    name: str
    source: str  # with the prelude
    key_names: tuple[str, ...]  # the fixed KEYS, in order


def key_names(source: str) -> tuple[str, ...]:
    """The names a script binds ``KEYS[1..n]`` to (its first binding statements)."""
    names: dict[int, str] = {}
    for match in _BINDING.finditer(source):
        locals_ = [n.strip() for n in match[1].split(",")]
        indexes = [int(i) for i in re.findall(r"KEYS\[(\d+)\]", match[2])]
        if len(locals_) != len(indexes):
            raise ValueError(f"uneven KEYS binding: {match[0]!r}")
        names.update(zip(indexes, locals_, strict=True))
    if sorted(names) != list(range(1, len(names) + 1)):
        raise ValueError(f"KEYS bindings are not KEYS[1..n]: {sorted(names)}")
    return tuple(names[i] for i in range(1, len(names) + 1))


@cache
def load(name: str) -> ScriptSource:
    body = (LUA_DIR / f"{name}.lua").read_text(encoding="utf-8")
    prelude = lua_field_table() + (LUA_DIR / f"{PRELUDE}.lua").read_text(encoding="utf-8")
    return ScriptSource(name, prelude + "\n" + body, key_names(body))


def script_names() -> list[str]:
    return sorted(p.stem for p in LUA_DIR.glob("*.lua") if p.stem != PRELUDE)


class Scripts:
    """The scripts of one Redis client, registered on first use."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._registered: dict[str, AsyncScript] = {}

    async def run(
        self,
        name: str,
        keys: Mapping[str, str],
        args: Sequence[Any] = (),
        more_keys: Sequence[str] = (),
    ) -> Any:
        """Run script ``name`` with its fixed keys by name, then ``more_keys``."""
        registered, all_keys = self._prepare(name, keys, more_keys)
        try:
            return await registered(keys=all_keys, args=list(args))
        except ResponseError as exc:
            raise _error(exc) from None

    async def run_many(self, calls: Sequence[ScriptCall], *, raw: bool = False) -> list[Any]:
        """Several :meth:`run` calls in one pipelined round trip, not a transaction (each
        script is atomic on its own; on a Redis Cluster, one pipeline per shard); their
        replies in order. A script the server did not have yet (NOSCRIPT: not run, e.g.
        after a restart) is then loaded and run alone. An error reply is raised once every reply is
        read (:class:`StaleLayout` for a stale layout). ``raw``: the replies' strings
        as bytes, never decoded (a search's binary postings)."""
        if len(calls) == 1 and not raw:
            return [await self.run(*calls[0])]
        options = {NEVER_DECODE: True} if raw else {}
        pipe = self._redis.pipeline(transaction=False)
        for name, keys, args, more_keys in calls:
            registered, all_keys = self._prepare(name, keys, more_keys)
            # (redis-py's cluster pipeline refuses its evalsha method, not the command:
            # each call's keys are of one hash slot, which routes it)
            pipe.execute_command(
                "EVALSHA", registered.sha, len(all_keys), *all_keys, *args, **options
            )
        replies = await pipe.execute(raise_on_error=False) if calls else []
        out, error = [], None
        for call, sent in zip(calls, replies, strict=True):
            reply = sent
            if isinstance(sent, NoScriptError):
                name, keys, args, more_keys = call
                registered, all_keys = self._prepare(name, keys, more_keys)
                try:
                    # loaded, then run by its digest: the deployment's ACL users may
                    # SCRIPT LOAD and EVALSHA, never EVAL (deploy/redis/users.acl.in)
                    sha = await self._redis.script_load(registered.script)
                    reply = await self._redis.execute_command(  # type: ignore[no-untyped-call]
                        "EVALSHA", sha, len(all_keys), *all_keys, *args, **options
                    )
                except ResponseError as exc:
                    reply = exc
                if isinstance(reply, ResponseError):
                    error = error or _error(reply)
            elif isinstance(sent, ResponseError):
                error = error or _error(sent)
            out.append(reply)
        if error is not None:
            raise error
        return out

    def _prepare(
        self, name: str, keys: Mapping[str, str], more_keys: Sequence[str]
    ) -> tuple[AsyncScript, list[str]]:
        script = load(name)
        if keys.keys() != set(script.key_names):
            raise TypeError(
                f"{name}.lua takes KEYS {', '.join(script.key_names)}; got {', '.join(keys)}"
            )
        registered = self._registered.get(name)
        if registered is None:
            registered = self._registered[name] = self._redis.register_script(script.source)
        all_keys = [keys[k] for k in script.key_names]
        all_keys.extend(more_keys)
        return registered, all_keys


# One call of a script: its name, fixed keys by name, arguments, variable keys.
ScriptCall = tuple[str, Mapping[str, str], Sequence[Any], Sequence[str]]


def _error(exc: ResponseError) -> Exception:
    if str(exc).startswith("STALE"):
        return StaleLayout(str(exc))
    return exc


class KeyIndex:
    """Variable keys of one call: each key once, with the 1-based KEYS index the script
    reads it at (after the script's ``fixed`` keys)."""

    def __init__(self, fixed: int) -> None:
        self.fixed = fixed
        self.keys: list[str] = []
        self._index: dict[str, int] = {}

    def add(self, key: str) -> int:
        index = self._index.get(key)
        if index is None:
            self.keys.append(key)
            index = self._index[key] = self.fixed + len(self.keys)
        return index

"""The benchmark's process hooks: the harness (``bench/harness.py``) puts this folder first
on its children's ``PYTHONPATH``, so every Python process it starts imports this
``sitecustomize`` at start-up. Nothing here runs unless the harness asks for it through
the environment:

* ``INVCRAWL_BENCH_RUSAGE=DIR``: the exact rusage and peak RSS of every process, written
  to ``DIR/<pid>.json`` at exit (``os._exit`` included: a forked child leaves that way);
* ``INVCRAWL_BENCH_ROUNDTRIPS=1`` too (``bench/stages.py``): every packet sent to Redis
  by label, and the thread CPU time of ``extract_page``, to ``DIR/<pid>.rt``.

Then the next ``sitecustomize`` on the path, if any, runs (chained).
"""

import atexit
import json
import os
import resource
import sys
import time


def _invcrawl_at_exit(dump):
    """Run ``dump`` when the process ends: at exit, and in ``os._exit`` too (a forked
    child, produce --consume's producer, leaves that way: no atexit)."""
    atexit.register(dump)
    os_exit = os._exit

    def exit_after_dump(code):
        try:
            dump()
        finally:
            os_exit(code)

    os._exit = exit_after_dump


_out = os.environ.get("INVCRAWL_BENCH_RUSAGE")
if _out:

    def _invcrawl_bench_dump():
        ru = resource.getrusage(resource.RUSAGE_SELF)
        # Peak RSS from VmHWM, not ru_maxrss: Linux carries the parent's high-water mark
        # over fork/vfork + exec into ru_maxrss, so a child of a big parent would report
        # the parent's RSS. VmHWM belongs to the process's own (post-exec) memory map.
        hwm = 0
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
        data = {
            "pid": os.getpid(),
            "argv": sys.argv,
            "utime": ru.ru_utime,
            "stime": ru.ru_stime,
            "maxrss_kb": hwm or ru.ru_maxrss,
            "ru_maxrss_kb": ru.ru_maxrss,
            "end": time.time(),
        }
        with open(os.path.join(_out, f"{os.getpid()}.json"), "w") as f:
            json.dump(data, f)

    _invcrawl_at_exit(_invcrawl_bench_dump)


def _chain():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry])
        if spec and spec.loader:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


_chain()  # (before the round trips are counted: as the harness always did)

if os.environ.get("INVCRAWL_BENCH_ROUNDTRIPS") and _out:
    import collections as _collections

    _invcrawl_rt = _collections.Counter()
    os.register_at_fork(after_in_child=_invcrawl_rt.clear)

    import hashlib

    def _invcrawl_rt_label(command):
        # the first command's name (a script: EVALSHA and its SHA-1), and how many
        # commands the packet holds when more than one (a pipeline)
        if isinstance(command, str):
            command = command.encode()
        data = command if isinstance(command, bytes) else b"".join(bytes(c) for c in command)
        first, count, pos = "?", 0, 0
        while pos < len(data) and data[pos : pos + 1] == b"*":
            end = data.index(b"\r\n", pos)
            argc, pos, args = int(data[pos + 1 : end]), end + 2, []
            for _ in range(argc):
                end = data.index(b"\r\n", pos)
                size = int(data[pos + 1 : end])
                args.append(data[end + 2 : end + 2 + size])
                pos = end + 4 + size
            if count == 0 and args:
                first = args[0].upper().decode(errors="replace")
                if first == "EVALSHA" and len(args) > 1:
                    first += " " + args[1].decode(errors="replace")
                elif first == "EVAL" and len(args) > 1:
                    first += " " + hashlib.sha1(args[1]).hexdigest()
            count += 1
        return first + (f" x{count}" if count > 1 else "")

    import redis.asyncio.connection as _rac
    import redis.connection as _rsc

    _invcrawl_async_send = _rac.AbstractConnection.send_packed_command
    _invcrawl_sync_send = _rsc.AbstractConnection.send_packed_command

    async def _invcrawl_async_counted(self, command, check_health=True):
        _invcrawl_rt[_invcrawl_rt_label(command)] += 1
        return await _invcrawl_async_send(self, command, check_health)

    def _invcrawl_sync_counted(self, command, check_health=True):
        _invcrawl_rt[_invcrawl_rt_label(command)] += 1
        return _invcrawl_sync_send(self, command, check_health)

    _rac.AbstractConnection.send_packed_command = _invcrawl_async_counted
    _rsc.AbstractConnection.send_packed_command = _invcrawl_sync_counted

    # The exact CPU time of extract_page per process (thread CPU time around each call):
    # the same code in every system, so a difference is the process around it, not the
    # extractor. Wrapped when invcrawl.common.extract is first imported, before any module takes
    # a reference to the function.
    import importlib.abc
    import importlib.machinery
    import time as _time

    _invcrawl_extract = [0.0, 0]

    class _InvcrawlExtractFinder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name != "invcrawl.common.extract":
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                original = module.extract_page

                def extract_page(*args, **kwargs):
                    started = _time.thread_time()
                    try:
                        return original(*args, **kwargs)
                    finally:
                        _invcrawl_extract[0] += _time.thread_time() - started
                        _invcrawl_extract[1] += 1

                module.extract_page = extract_page

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _InvcrawlExtractFinder())

    def _invcrawl_rt_dump():
        with open(os.path.join(_out, f"{os.getpid()}.rt"), "w") as f:
            json.dump(
                {
                    "pid": os.getpid(),
                    "argv": sys.argv,
                    "roundtrips": _invcrawl_rt,
                    "extract_cpu": _invcrawl_extract[0],
                    "extract_calls": _invcrawl_extract[1],
                },
                f,
            )

    _invcrawl_at_exit(_invcrawl_rt_dump)

"""The query set of ``bench/search.py`` (issue 38): queries written from real sites, each
with the item key it should find first.

* ``PHRASES``: written by hand from the first sentences of the CPython 3.11 docs
  (``/usr/share/doc/python3.11/html``, crawled by invcrawl), the way a person or an agent
  asks ("parse a JSON string" for ``json.loads``): partly the summary's words, partly
  not; scored by the reciprocal rank of the target (MRR).
* ``LAST_NAMES``: last components written by hand, ambiguous on purpose (``loads`` is in
  json, pickle, marshal and tomllib): the target is the one a Python user means.
* :func:`name_queries`: qualified names and unambiguous last components sampled (seeded)
  from the real items; target first or not.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from invcrawl.common.search.terms import last_component


@dataclass(frozen=True, slots=True)
class BenchQuery:
    query: str
    target: str  # the item key that should come first
    kind: str  # "name", "last", "last-hand", "phrase"


PHRASES: dict[str, str] = {
    "parse a JSON document into a Python object": "py:function:json.loads",
    "serialize an object to a JSON formatted string": "py:function:json.dumps",
    "join path segments": "py:function:os.path.join",
    "list the entries in a directory": "py:function:os.listdir",
    "copy the contents of a file": "py:function:shutil.copyfile",
    "delete an entire directory tree": "py:function:shutil.rmtree",
    "run the command described by args": "py:function:subprocess.run",
    "suspend execution of the calling thread for seconds": "py:function:time.sleep",
    "compile a regular expression pattern": "py:function:re.compile",
    "replace occurrences of a pattern in a string": "py:function:re.sub",
    "random element from a sequence": "py:function:random.choice",
    "shuffle a sequence in place": "py:function:random.shuffle",
    "memoizing decorator that caches recent calls": "py:function:functools.lru_cache",
    "dict subclass for counting hashable objects": "py:class:collections.Counter",
    "parse a date string according to a format": "py:method:datetime.datetime.strptime",
    "current local date and time": "py:method:datetime.datetime.now",
    "encode bytes using Base64": "py:function:base64.b64encode",
    "parse a URL into components": "py:function:urllib.parse.urlparse",
    "escape special characters in a URL string": "py:function:urllib.parse.quote",
    "open a URL": "py:function:urllib.request.urlopen",
    "reader object iterating over lines of a csv file": "py:function:csv.reader",
    "writer that maps dictionaries onto output rows": "py:class:csv.DictWriter",
    "write the pickled representation of an object to a file": "py:function:pickle.dump",
    "create a temporary directory securely": "py:function:tempfile.mkdtemp",
    "recursive directory creation": "py:function:os.makedirs",
    "mapping of the process environment": "py:data:os.environ",
    "path names matching a pattern": "py:function:glob.glob",
    "test whether a filename matches a pattern": "py:function:fnmatch.fnmatch",
    "open a ZIP file": "py:class:zipfile.ZipFile",
    "open a gzip-compressed file": "py:function:gzip.open",
    "square root": "py:function:math.sqrt",
    "whether two values are close to each other": "py:function:math.isclose",
    "median of numeric data": "py:function:statistics.median",
    "arithmetic mean of data": "py:function:statistics.mean",
    "exit the interpreter": "py:function:sys.exit",
    "current working directory": "py:function:os.getcwd",
    "walk a directory tree top-down": "py:function:os.walk",
    "create a directory at a path": "py:method:pathlib.Path.mkdir",
    "remove common leading whitespace from lines": "py:function:textwrap.dedent",
    "wrap a paragraph so every line is at most width characters": "py:function:textwrap.wrap",
    "generate a random UUID": "py:function:uuid.uuid4",
    "deep copy": "py:function:copy.deepcopy",
    "push an item onto a heap": "py:function:heapq.heappush",
    "primitive lock objects": "py:class:threading.Lock",
    "run awaitable objects concurrently": "py:function:asyncio.gather",
    "execute a coroutine and return the result": "py:function:asyncio.run",
    "schedule a coroutine as a task": "py:function:asyncio.create_task",
    "create a new socket": "py:class:socket.socket",
    "pack values into bytes according to a format string": "py:function:struct.pack",
    "unpack a buffer according to a format string": "py:function:struct.unpack",
    "return a logger with the specified name": "py:function:logging.getLogger",
    "basic configuration for the logging system": "py:function:logging.basicConfig",
    "create a new ArgumentParser": "py:class:argparse.ArgumentParser",
    "define how a command-line argument should be parsed": (
        "py:method:argparse.ArgumentParser.add_argument"
    ),
    "split a string using shell-like syntax": "py:function:shlex.split",
    "shell-escaped version of a string": "py:function:shlex.quote",
    "time in seconds since the epoch": "py:function:time.time",
    "monotonic clock that cannot go backwards": "py:function:time.monotonic",
    "performance counter to measure a short duration": "py:function:time.perf_counter",
    "rename a file or directory": "py:function:os.rename",
    "path to an executable": "py:function:shutil.which",
    "move a file or directory to another location": "py:function:shutil.move",
    "set the handler for a signal": "py:function:signal.signal",
    "open a connection to an SQLite database": "py:function:sqlite3.connect",
    "signature object for a callable": "py:function:inspect.signature",
    "callable that fetches an item from its operand": "py:function:operator.itemgetter",
    "suppress specified exceptions in a with statement": "py:function:contextlib.suppress",
    "random text string in hexadecimal": "py:function:secrets.token_hex",
    "unified diff of two lists of strings": "py:function:difflib.unified_diff",
    "convert characters to HTML-safe sequences": "py:function:html.escape",
    "parse an XML section into an element tree": "py:function:xml.etree.ElementTree.parse",
    "message object structure from a string": "py:function:email.message_from_string",
    "compress bytes": "py:function:zlib.compress",
    "prompt for a password without echoing": "py:function:getpass.getpass",
    "pretty print the formatted representation of an object": "py:function:pprint.pprint",
    "issue a warning": "py:function:warnings.warn",
    "weak reference to an object": "py:class:weakref.ref",
    "text stream using an in-memory buffer": "py:class:io.StringIO",
    "weekday of first day of the month and number of days": "py:function:calendar.monthrange",
    "construct a Decimal from a value": "py:class:decimal.Decimal",
    "typed version of namedtuple": "py:class:typing.NamedTuple",
    "enumerations base class": "py:class:enum.Enum",
}

LAST_NAMES: dict[str, str] = {
    "loads": "py:function:json.loads",
    "dumps": "py:function:json.dumps",
    "Path": "py:class:pathlib.Path",
    "sleep": "py:function:time.sleep",
    "OrderedDict": "py:class:collections.OrderedDict",
    "namedtuple": "py:function:collections.namedtuple",
    "urlopen": "py:function:urllib.request.urlopen",
    "ArgumentParser": "py:class:argparse.ArgumentParser",
    "Popen": "py:class:subprocess.Popen",
    "deepcopy": "py:function:copy.deepcopy",
    "defaultdict": "py:class:collections.defaultdict",
    "lru_cache": "py:function:functools.lru_cache",
    "dataclass": "py:function:dataclasses.dataclass",
    "getLogger": "py:function:logging.getLogger",
    "urlparse": "py:function:urllib.parse.urlparse",
    "ZipFile": "py:class:zipfile.ZipFile",
    "Decimal": "py:class:decimal.Decimal",
    "Counter": "py:class:collections.Counter",
    "StringIO": "py:class:io.StringIO",
    "contextmanager": "py:function:contextlib.contextmanager",
}


def name_queries(items: Sequence[dict[str, Any]], count: int, seed: int = 38) -> list[BenchQuery]:
    """``count`` qualified names and ``count`` unambiguous last components (within the
    items given), sampled from Python-domain API items with a fixed seed."""
    rng = random.Random(seed)
    api = [
        i
        for i in items
        if i.get("domain") == "py" and i.get("status") == "ok" and i.get("role") != "module"
    ]
    by_name: dict[str, int] = {}
    by_last: dict[str, int] = {}
    for item in items:
        by_name[item["name"].lower()] = by_name.get(item["name"].lower(), 0) + 1
        last = last_component(item["name"]).lower()
        by_last[last] = by_last.get(last, 0) + 1
    unique_names = [i for i in api if by_name[i["name"].lower()] == 1]
    unique_lasts = [
        i
        for i in api
        if by_last[last_component(i["name"]).lower()] == 1 and len(last_component(i["name"])) > 3
    ]
    names = rng.sample(unique_names, count)
    lasts = rng.sample(unique_lasts, count)
    return [BenchQuery(i["name"], i["key"], "name") for i in names] + [
        BenchQuery(last_component(i["name"]), i["key"], "last") for i in lasts
    ]


def query_set(items: Sequence[dict[str, Any]], sampled: int = 50) -> list[BenchQuery]:
    """Every query: sampled names, hand-written last components and phrases."""
    keys = {i["key"] for i in items}
    hand = [BenchQuery(q, t, "last-hand") for q, t in LAST_NAMES.items()]
    hand += [BenchQuery(q, t, "phrase") for q, t in PHRASES.items()]
    missing = [q.target for q in hand if q.target not in keys]
    if missing:
        raise ValueError(f"targets not in the crawl: {', '.join(missing)}")
    return name_queries(items, sampled) + hand

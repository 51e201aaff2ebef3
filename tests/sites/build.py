"""Build the fixture Sphinx site (tests/sites/src) with a matrix of Sphinx versions and themes.

Each combo gets its own virtualenv under ``<repo>/.cache/sphinx/<combo>/venv`` (never the
project's venv) with pinned packages from PyPI, and its HTML under
``<repo>/.cache/sphinx/<combo>/html``. A build is skipped when that HTML exists and its stamp
records the same hash of (sources + combo spec); a venv is reused when its stamp records the
same package list.

Importable (``build_all``, ``COMBOS``) and runnable::

    python tests/sites/build.py --list
    python tests/sites/build.py                 # every combo, 2 at a time
    python tests/sites/build.py s4-rtd s9-alabaster --force

Set ``INVCRAWL_SITES_CACHE`` to move the cache root (default ``<repo>/.cache/sphinx``).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import ParamSpec, TypeVar

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
REPO = HERE.parents[1]
# Bump when the way a site is built changes (flags, layout), to invalidate old stamps.
BUILD_FORMAT = "1"

# Sphinx 4.x predates the upper bounds that its old dependencies need on today's PyPI:
# sphinxcontrib-* >= these versions require Sphinx >= 5, Jinja2 3.1 dropped names that
# Sphinx 4 themes use, alabaster >= 0.7.14 needs Sphinx >= 3.4 APIs shipped with 5+.
_SPHINX4_PINS = (
    "sphinxcontrib-applehelp==1.0.4",
    "sphinxcontrib-devhelp==1.0.2",
    "sphinxcontrib-htmlhelp==2.0.1",
    "sphinxcontrib-qthelp==1.0.3",
    "sphinxcontrib-serializinghtml==1.1.5",
    "jinja2==3.0.3",
    "alabaster==0.7.12",
)


@dataclass(frozen=True)
class Combo:
    """One (Sphinx version, theme) pair; ``packages`` is the full pip requirement list."""

    id: str
    sphinx: str
    theme: str  # value of html_theme
    packages: tuple[str, ...]
    note: str = ""

    @property
    def major(self) -> int:
        return int(self.sphinx.split(".")[0])

    def spec(self) -> str:
        return json.dumps(
            {"id": self.id, "theme": self.theme, "packages": list(self.packages)}, sort_keys=True
        )


COMBOS: tuple[Combo, ...] = (
    Combo(
        "s4-alabaster",
        "4.5.0",
        "alabaster",
        ("sphinx==4.5.0", "docutils==0.17.1", *_SPHINX4_PINS),
        "docutils 0.17: <section>, field names without span.colon",
    ),
    Combo(
        "s4-rtd",
        "4.5.0",
        "sphinx_rtd_theme",
        ("sphinx==4.5.0", "docutils==0.16", "sphinx-rtd-theme==1.0.0", *_SPHINX4_PINS),
        "docutils 0.16: <div class=section>",
    ),
    Combo(
        "s5-pydata",
        "5.3.0",
        "pydata_sphinx_theme",
        ("sphinx==5.3.0", "docutils==0.19", "pydata-sphinx-theme==0.13.3"),
        "pydata main#main-content / article.bd-article",
    ),
    Combo(
        "s6-furo",
        "6.2.1",
        "furo",
        ("sphinx==6.2.1", "docutils==0.19", "furo==2023.3.27"),
        "furo article[role=main]",
    ),
    Combo(
        "s7-rtd",
        "7.4.7",
        "sphinx_rtd_theme",
        ("sphinx==7.4.7", "docutils==0.20.1", "sphinx-rtd-theme==2.0.0"),
        "'Added in version', multi-line signature dl inside dt",
    ),
    Combo(
        "s8-furo",
        "8.1.3",
        "furo",
        ("sphinx==8.1.3", "docutils==0.21.2", "furo==2024.8.6"),
        "furo on the multi-line-signature era",
    ),
    Combo(
        "s8-pydata",
        "8.2.3",
        "pydata_sphinx_theme",
        ("sphinx==8.2.3", "docutils==0.21.2", "pydata-sphinx-theme==0.16.1"),
        "",
    ),
    Combo(
        "s9-alabaster",
        "9.0.4",
        "alabaster",
        ("sphinx==9.0.4", "alabaster==1.0.0"),
        "<span class=property> annotations",
    ),
)
COMBOS_BY_ID = {c.id: c for c in COMBOS}


class BuildError(RuntimeError):
    """A combo could not be built; the message says why (no traceback needed)."""


class PipUnreachable(BuildError):
    """pip could not reach the package index at all."""


@dataclass
class BuiltSite:
    combo: Combo
    root: Path
    cached: bool
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def html(self) -> Path:
        return self.root / "html"

    @property
    def inventory(self) -> Path:
        return self.html / "objects.inv"


def cache_root() -> Path:
    env = os.environ.get("INVCRAWL_SITES_CACHE")
    return Path(env) if env else REPO / ".cache" / "sphinx"


P = ParamSpec("P")
R = TypeVar("R")


class _Holders:
    """How many builders of this process are inside the cache's lock."""

    def __init__(self) -> None:
        self.depth = 0
        self.guard = threading.Lock()


_HOLDERS = _Holders()


@contextlib.contextmanager
def cache_lock() -> Iterator[None]:
    """The cache to one process at a time: pytest-xdist's workers may build the same
    venv or site together. Re-entrant within a process (its builder threads share it)."""
    with _HOLDERS.guard:
        held = _HOLDERS.depth > 0
        _HOLDERS.depth += 1
    try:
        if held:
            yield
            return
        root = cache_root()
        root.mkdir(parents=True, exist_ok=True)
        with open(root / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
            yield
    finally:
        with _HOLDERS.guard:
            _HOLDERS.depth -= 1


def holding_cache_lock(build: Callable[P, R]) -> Callable[P, R]:
    """``build`` run inside :func:`cache_lock`."""

    @functools.wraps(build)
    def locked(*args: P.args, **kwargs: P.kwargs) -> R:
        with cache_lock():
            return build(*args, **kwargs)

    return locked


def source_hash(src: Path = SRC) -> str:
    digest = hashlib.sha256()
    for path in sorted(src.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        digest.update(path.relative_to(src).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def combo_hash(combo: Combo, src_hash: str | None = None) -> str:
    text = "\n".join([BUILD_FORMAT, src_hash or source_hash(), combo.spec()])
    return hashlib.sha256(text.encode()).hexdigest()


def is_fresh(combo: Combo, src_hash: str | None = None) -> bool:
    root = cache_root() / combo.id
    stamp = root / "stamp.json"
    if not (root / "html" / "objects.inv").is_file() or not stamp.is_file():
        return False
    try:
        return bool(json.loads(stamp.read_text())["hash"] == combo_hash(combo, src_hash))
    except (ValueError, KeyError):
        return False


_NETWORK_MARKERS = (
    "NewConnectionError",
    "Max retries exceeded",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Name or service not known",
    "ConnectTimeoutError",
    "Connection refused",
    "Failed to establish a new connection",
    "ProxyError",
)

_log_lock = threading.Lock()
_T0 = time.monotonic()


def _default_log(msg: str) -> None:
    with _log_lock:
        print(f"[{time.monotonic() - _T0:6.1f}s] {msg}", flush=True)


def _clean_env(venv: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
    }
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # keep __pycache__ out of tests/sites/src
    env["SOURCE_DATE_EPOCH"] = "1700000000"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    return env


def _base_python() -> str:
    exe = shutil.which("python3.11")
    if exe:
        return exe
    if sys.version_info[:2] == (3, 11):
        return sys.executable
    raise BuildError("python3.11 is needed to create the Sphinx venvs and was not found on PATH")


def _run(
    cmd: Sequence[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(cmd),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join("    " + line for line in text.strip().splitlines()[-lines:])


_host_pip_cache: dict[str, list[str]] = {}


def _host_pip(base: str) -> list[str]:
    """``[base, -m, pip]`` when the base interpreter's pip supports ``--python``, else []."""
    if base not in _host_pip_cache:
        proc = subprocess.run(
            [base, "-m", "pip", "--version"],
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        parts = proc.stdout.split()
        ok = False
        if proc.returncode == 0 and len(parts) > 1:
            try:
                ok = tuple(int(x) for x in parts[1].split(".")[:2]) >= (22, 3)
            except ValueError:
                ok = False
        _host_pip_cache[base] = [base, "-m", "pip"] if ok else []
    return _host_pip_cache[base]


def ensure_venv(combo: Combo, log: Callable[[str], None] = _default_log) -> Path:
    """Create (or reuse) the combo's venv with its pinned packages; return its python."""
    return venv_with(combo.id, combo.packages, log)


@holding_cache_lock
def venv_with(
    name: str, packages: Sequence[str], log: Callable[[str], None] = _default_log
) -> Path:
    """Create (or reuse) the venv ``<cache>/<name>/venv`` holding exactly ``packages``
    (pinned, from the package index); return its python. Every fixture builder's venvs
    (Sphinx, mkdocstrings, pydoctor) are made here."""
    venv = cache_root() / name / "venv"
    python = venv / "bin" / "python"
    stamp = venv / "invcrawl-packages.json"
    wanted = json.dumps(sorted(packages))
    if python.exists() and stamp.is_file() and stamp.read_text() == wanted:
        return python
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    log(f"{name}: creating venv")
    base = _base_python()
    # Fast path: a venv without pip, filled by the base interpreter's pip (>= 22.3 has
    # --python); ensurepip costs ~10 s per venv otherwise.
    host_pip = _host_pip(base)
    proc = _run(
        [base, "-m", "venv", *(["--without-pip"] if host_pip else []), str(venv)],
        _clean_env(venv),
        300,
    )
    if proc.returncode != 0:
        raise BuildError(f"{name}: python -m venv failed:\n{_tail(proc.stderr + proc.stdout)}")
    more = " ..." if len(packages) > 3 else ""
    log(f"{name}: pip install {' '.join(packages[:3])}{more}")
    pip = [*host_pip, "--python", str(python)] if host_pip else [str(python), "-m", "pip"]
    proc = _run(
        [*pip, "install", "--quiet", "--timeout", "60", "--retries", "3", *packages],
        _clean_env(venv),
        900,
    )
    if proc.returncode != 0:
        out = proc.stderr + proc.stdout
        shutil.rmtree(venv, ignore_errors=True)
        if any(marker in out for marker in _NETWORK_MARKERS):
            raise PipUnreachable(f"{name}: pip cannot reach the package index:\n{_tail(out)}")
        raise BuildError(f"{name}: pip could not install {' '.join(packages)}:\n{_tail(out)}")
    stamp.write_text(wanted)
    return python


@holding_cache_lock
def build_combo(
    combo: Combo,
    *,
    force: bool = False,
    src_hash: str | None = None,
    log: Callable[[str], None] = _default_log,
) -> BuiltSite:
    root = cache_root() / combo.id
    src_hash = src_hash or source_hash()
    if not force and is_fresh(combo, src_hash):
        log(f"{combo.id}: up to date (cached)")
        return BuiltSite(combo, root, cached=True)
    start = time.monotonic()
    python = ensure_venv(combo, log)
    out, tmp, doctrees = root / "html", root / "html.tmp", root / "doctrees"
    for path in (tmp, doctrees):
        shutil.rmtree(path, ignore_errors=True)
    log(f"{combo.id}: sphinx-build (sphinx {combo.sphinx}, {combo.theme})")
    proc = _run(
        [
            str(python),
            "-m",
            "sphinx",
            "-b",
            "html",
            "-q",
            "-E",
            "-d",
            str(doctrees),
            "-D",
            f"html_theme={combo.theme}",
            str(SRC),
            str(tmp),
        ],
        _clean_env(python.parent.parent),
        600,
    )
    (root / "build.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not (tmp / "objects.inv").is_file():
        raise BuildError(
            f"{combo.id}: sphinx-build failed (exit {proc.returncode}), "
            f"log in {root / 'build.log'}:\n{_tail(proc.stderr + proc.stdout)}"
        )
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    shutil.rmtree(doctrees, ignore_errors=True)
    (root / "stamp.json").write_text(
        json.dumps(
            {"hash": combo_hash(combo, src_hash), "combo": json.loads(combo.spec())}, indent=1
        )
    )
    seconds = time.monotonic() - start
    warnings = [line for line in proc.stderr.splitlines() if "WARNING" in line]
    log(f"{combo.id}: built in {seconds:.1f}s ({len(warnings)} warnings)")
    return BuiltSite(combo, root, cached=False, seconds=seconds, warnings=warnings)


def select(ids: Iterable[str] | None = None) -> list[Combo]:
    ids = list(ids or [])
    unknown = [i for i in ids if i not in COMBOS_BY_ID]
    if unknown:
        raise BuildError(f"unknown combo(s) {', '.join(unknown)}; known: {', '.join(COMBOS_BY_ID)}")
    return [COMBOS_BY_ID[i] for i in ids] if ids else list(COMBOS)


@holding_cache_lock
def build_all(
    ids: Iterable[str] | None = None,
    *,
    jobs: int | None = None,
    force: bool = False,
    log: Callable[[str], None] = _default_log,
) -> dict[str, BuiltSite]:
    """Build the selected combos (all by default), ``jobs`` at a time. Raises BuildError
    (PipUnreachable when the index is unreachable) after every combo has been attempted."""
    combos = select(ids)
    src_hash = source_hash()
    jobs = jobs or max(1, min(2, os.cpu_count() or 1))
    results: dict[str, BuiltSite] = {}
    errors: list[BuildError] = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {
            c.id: pool.submit(build_combo, c, force=force, src_hash=src_hash, log=log)
            for c in combos
        }
        for cid, fut in futures.items():
            try:
                results[cid] = fut.result()
            except BuildError as exc:
                errors.append(exc)
            except subprocess.TimeoutExpired as exc:
                errors.append(BuildError(f"{cid}: timed out: {exc.cmd}"))
    raise_collected(errors)
    return results


def raise_collected(errors: Sequence[BuildError]) -> None:
    """One error for the builds that failed: PipUnreachable when every one of them could
    not reach the package index (the tests then skip), else BuildError."""
    if errors:
        cls = PipUnreachable if all(isinstance(e, PipUnreachable) for e in errors) else BuildError
        raise cls("\n".join(str(e) for e in errors))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("combos", nargs="*", help="combo ids (default: all)")
    parser.add_argument("--list", action="store_true", help="list combos and cache state")
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="parallel builds (default 2)")
    args = parser.parse_args(argv)
    try:
        combos = select(args.combos)
        if args.list:
            src_hash = source_hash()
            for c in combos:
                state = "cached" if is_fresh(c, src_hash) else "stale"
                print(
                    f"{c.id:14} sphinx {c.sphinx:6} {c.theme:20} {state:6}  {' '.join(c.packages)}"
                )
            return 0
        start = time.monotonic()
        sites = build_all(args.combos, jobs=args.jobs, force=args.force)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    built = sum(not s.cached for s in sites.values())
    print(
        f"{len(sites)} combos ready ({built} built, {len(sites) - built} cached) "
        f"in {time.monotonic() - start:.1f}s under {cache_root()}"
    )
    for s in sites.values():
        print(f"  {s.combo.id:14} {s.html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

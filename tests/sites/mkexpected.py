"""Ground truth of the mkdocstrings fixture site, derived from its SOURCES with ``ast``
(tests/sites/mkdocs_src: the ``mkfixture`` package, Google style, and ``numpystyle``), never
from the built HTML or the extractor.

For every documented symbol (one with a docstring, as mkdocstrings' default filters show):
its inventory key, role, parent, the first paragraph of its docstring, its parameters (name,
kind, annotation, default, description from the docstring's Args/Parameters section), its
return annotation and Returns description, its Raises types, the labels its decorators
and ``async`` imply, and the version notes its docstring writes.
"""

from __future__ import annotations

import ast
import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent / "mkdocs_src"
# (module name, file, docstring style)
MODULES = (
    ("mkfixture", SRC / "mkfixture" / "__init__.py", "google"),
    ("mkfixture.core", SRC / "mkfixture" / "core.py", "google"),
    ("numpystyle", SRC / "numpystyle.py", "numpy"),
)
# Module constants' values (``DEFAULT_SIZE``: ``3``): the legacy handler shows a default's
# value (inspect), the current one its source text.
CONSTANTS: dict[str, str] = {}
_KINDS = ("positional-only", "positional-or-keyword", "var-positional", "keyword-only")


@dataclass
class Param:
    name: str  # with the * / ** of a variadic one
    kind: str
    annotation: str | None
    default: str | None
    description: str | None
    doc_type: str | None = None  # the type the docstring writes (numpy)


@dataclass
class Symbol:
    name: str
    role: str  # module | class | function | method | property | attribute | data
    parent: str | None
    doc: str  # first paragraph of the docstring, whitespace collapsed
    docstring: str = ""  # the whole docstring, whitespace collapsed
    params: list[Param] = field(default_factory=list)
    implicit: str | None = None  # self / cls: a method's first parameter
    returns: str | None = None  # the return annotation
    returns_doc: str | None = None
    returns_type: str | None = None  # the docstring's return type (numpy)
    raises: list[str] = field(default_factory=list)
    labels: set[str] = field(default_factory=set)
    versions: list[tuple[str, str | None]] = field(default_factory=list)
    members: list[str] = field(default_factory=list)  # names of documented members
    init_params: list[Param] | None = None  # a class's __init__ parameters
    doc_params: list[str] = field(default_factory=list)  # a class docstring's Parameters

    @property
    def callable(self) -> bool:
        return self.role in ("function", "method")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _first_paragraph(doc: str) -> str:
    return _collapse(doc.strip().split("\n\n", 1)[0])


def _google_sections(doc: str) -> dict[str, list[tuple[str, str]]]:
    """Google-style sections: title -> [(head, first line of text)]."""
    out: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        match = re.fullmatch(r"([A-Z][\w ]*):(.*)", stripped)
        if line and not line.startswith(" ") and match:
            current = out.setdefault(match[1], [])
            if match[2].strip():
                current.append(("", match[2].strip()))
            continue
        if current is None or not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 4:
            head, _, rest = stripped.partition(":")
            if rest or not current:
                current.append((head.strip(), rest.strip()))
            else:
                current.append(("", stripped))
    return out


def _numpy_sections(doc: str) -> dict[str, list[tuple[str, str]]]:
    """numpydoc sections: title -> [(head line, first line of its text)]."""
    lines = doc.splitlines()
    out: dict[str, list[tuple[str, str]]] = {}
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
            items = out.setdefault(lines[i].strip(), [])
            i += 2
            while i < len(lines) and not (
                i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip())
            ):
                line = lines[i]
                if line.strip() and len(line) - len(line.lstrip()) == 0:
                    nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
                    items.append((line.strip(), nxt))
                i += 1
            continue
        i += 1
    return out


def _dedent(doc: str) -> str:
    import inspect

    return inspect.cleandoc(doc)


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[Param], str | None]:
    args = fn.args
    out: list[Param] = []
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        kind = _KINDS[0] if i < len(args.posonlyargs) else _KINDS[1]
        out.append(Param(arg.arg, kind, _unparse(arg.annotation), _unparse(default), None))
    if args.vararg is not None:
        out.append(
            Param("*" + args.vararg.arg, _KINDS[2], _unparse(args.vararg.annotation), None, None)
        )
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append(Param(arg.arg, _KINDS[3], _unparse(arg.annotation), _unparse(kw_default), None))
    if args.kwarg is not None:
        out.append(
            Param("**" + args.kwarg.arg, "var-keyword", _unparse(args.kwarg.annotation), None, None)
        )
    implicit = None
    if out and out[0].name in ("self", "cls"):
        implicit = out.pop(0).name
    return out, implicit


def _unparse(node: ast.expr | None) -> str | None:
    return None if node is None else ast.unparse(node)


def _decorators(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for dec in fn.decorator_list:
        names.add(ast.unparse(dec).rsplit(".", 1)[-1])
    return names


class _Reader:
    def __init__(self, style: str) -> None:
        self.style = style
        self.symbols: dict[str, Symbol] = {}

    def module(self, name: str, tree: ast.Module) -> None:
        doc = ast.get_docstring(tree) or ""
        sym = Symbol(name, "module", name.rsplit(".", 1)[0] if "." in name else None, "")
        sym.doc, sym.docstring = _first_paragraph(doc), _collapse(doc)
        self.symbols[name] = sym
        self.body(sym, tree.body, in_class=False)

    def body(self, owner: Symbol, nodes: list[ast.stmt], in_class: bool) -> None:
        for i, node in enumerate(nodes):
            if isinstance(node, ast.ClassDef):
                self.klass(owner, node)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.function(owner, node, in_class)
            elif isinstance(node, ast.AnnAssign | ast.Assign):
                nxt = nodes[i + 1] if i + 1 < len(nodes) else None
                if (
                    isinstance(nxt, ast.Expr)
                    and isinstance(nxt.value, ast.Constant)
                    and isinstance(nxt.value.value, str)
                ):
                    self.attribute(owner, node, _dedent(nxt.value.value), in_class)

    def attribute(
        self, owner: Symbol, node: ast.AnnAssign | ast.Assign, doc: str, in_class: bool
    ) -> None:
        target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
        assert isinstance(target, ast.Name)
        if node.value is not None and not in_class:
            with contextlib.suppress(ValueError):
                CONSTANTS[target.id] = repr(ast.literal_eval(node.value))
        name = f"{owner.name}.{target.id}"
        sym = Symbol(name, "attribute" if in_class else "data", owner.name, _first_paragraph(doc))
        sym.docstring = _collapse(doc)
        sym.labels = {"class_attribute"} if in_class else {"module_attribute"}
        self.symbols[name] = sym
        owner.members.append(name)

    def klass(self, owner: Symbol, node: ast.ClassDef) -> None:
        doc = ast.get_docstring(node)
        if doc is None:
            return
        name = f"{owner.name}.{node.name}"
        sym = Symbol(name, "class", owner.name, _first_paragraph(doc), _collapse(doc))
        if any(ast.unparse(d).endswith("abstractmethod") for d in node.decorator_list):
            sym.labels.add("abstractmethod")
        if self.style == "numpy":
            sym.doc_params = [
                h.partition(":")[0].strip() for h, _ in _numpy_sections(doc).get("Parameters", [])
            ]
        else:
            sym.doc_params = [h for h, _ in _google_sections(doc).get("Args", [])]
        for child in node.body:
            if isinstance(child, ast.FunctionDef) and child.name == "__init__":
                sym.init_params = _params(child)[0]
        self.symbols[name] = sym
        owner.members.append(name)
        self.body(sym, node.body, in_class=True)

    def function(
        self, owner: Symbol, node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool
    ) -> None:
        doc = ast.get_docstring(node)
        decorators = _decorators(node)
        if doc is None or "setter" in decorators:
            return
        name = f"{owner.name}.{node.name}"
        is_property = bool(decorators & {"property", "cached_property"})
        role = "property" if is_property else ("method" if in_class else "function")
        sym = Symbol(name, role, owner.name, _first_paragraph(doc), _collapse(doc))
        labels = {
            "property": "property",
            "cached_property": "cached_property",
            "classmethod": "classmethod",
            "staticmethod": "staticmethod",
            "abstractmethod": "abstractmethod",
        }
        sym.labels = {labels[d] for d in decorators if d in labels}
        if isinstance(node, ast.AsyncFunctionDef):
            sym.labels.add("async")
        if is_property:
            sym.returns = _unparse(node.returns)
            self.symbols[name] = sym
            owner.members.append(name)
            return
        sym.params, sym.implicit = _params(node)
        if "staticmethod" in decorators:
            sym.implicit = None
        sym.returns = _unparse(node.returns)
        self.docstring(sym, doc)
        self.symbols[name] = sym
        owner.members.append(name)

    def docstring(self, sym: Symbol, doc: str) -> None:
        by_name = {p.name.lstrip("*"): p for p in sym.params}
        if self.style == "google":
            sections = _google_sections(doc)
            for head, text in sections.get("Args", []):
                if head.lstrip("*") in by_name:
                    by_name[head.lstrip("*")].description = text
            returns = sections.get("Returns", [])
            if returns:
                sym.returns_doc = returns[0][1] or returns[0][0]
            sym.raises = [head for head, _ in sections.get("Raises", [])]
            for head, text in sections.get("Deprecated", []):
                version = re.search(r"\d+(?:\.\d+)+", f"{head}: {text}")
                sym.versions.append(("deprecated", version.group(0) if version else None))
            for _, text in sections.get("Note", []):
                added = re.match(r"Added in version (\d+(?:\.\d+)*)", text)
                if added:
                    sym.versions.append(("added", added[1]))
            return
        sections = _numpy_sections(doc)
        for head, text in sections.get("Parameters", []):
            pname, _, type_ = head.partition(":")
            p = by_name.get(pname.strip().lstrip("*"))
            if p is not None:
                p.description, p.doc_type = text, type_.strip() or None
        returns = sections.get("Returns", [])
        if returns:
            sym.returns_type, sym.returns_doc = returns[0][0], returns[0][1]
        sym.raises = [head for head, _ in sections.get("Raises", [])]
        deprecated = re.search(r"\.\. deprecated:: (\S+)", doc)
        if deprecated:
            sym.versions.append(("deprecated", deprecated[1]))


def symbols() -> dict[str, Symbol]:
    """Every documented symbol of the fixture sources, by its dotted name."""
    out: dict[str, Symbol] = {}
    for name, path, style in MODULES:
        reader = _Reader(style)
        reader.module(name, ast.parse(path.read_text(encoding="utf-8")))
        out.update(reader.symbols)
    return out


# The inventory roles mkdocstrings gives each kind of symbol (the legacy handler says attr).
ROLES: dict[str, tuple[str, ...]] = {
    "module": ("module",),
    "class": ("class", "exception"),
    "function": ("function",),
    "method": ("method", "function"),
    "property": ("property", "attribute", "attr"),
    "attribute": ("attribute", "attr"),
    "data": ("data", "attribute", "attr"),
}


def as_dict(sym: Symbol) -> dict[str, Any]:  # pragma: no cover - a debugging aid
    return sym.__dict__

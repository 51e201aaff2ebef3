"""The ground truth of the pydoctor fixture sites, derived from the SOURCES of
``tests/sites/pysrc/pdfixture`` with ``ast`` (never from the built HTML or the extractor):
every module, class, function, method and attribute pydoctor documents, with its
parameters (names, kinds, defaults, annotations), labels (decorators, ``async``, the
kind of an attribute), the first line of its docstring, its documented parameters,
return value, exceptions and version notes (epytext ``@param``/``@type``/``@return``/
``@rtype``/``@raise``/``@since``, reStructuredText ``:param:``/``:type:``/``:returns:``/
``:rtype:``/``:raises X:``, ``.. versionadded::``/``versionchanged``/``deprecated``, and
``twisted.python.deprecate.deprecated``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sites.pydoctor_build import PACKAGE, PYSRC

KINDS = {
    "posonly": "positional-only",
    "arg": "positional-or-keyword",
    "vararg": "var-positional",
    "kwonly": "keyword-only",
    "kwarg": "var-keyword",
}
# Decorators that are labels (docs/items.md), by their last dotted part.
LABEL_DECORATORS = {"property", "classmethod", "staticmethod", "abstractmethod"}
_FIELD = re.compile(r"^\s*[@:](\w+)(?:\s+([\w*]+))?\s*:\s*(.*)$")
_DIRECTIVE = re.compile(r"^\s*\.\. (versionadded|versionchanged|deprecated):: (\S+)\s*$")
_MARKUP = re.compile(r"[A-Z]\{([^}]*)\}|:\w+:`([^`]*)`|``([^`]*)``")


@dataclass
class Param:
    name: str
    kind: str
    default: str | None
    annotation: str | None
    description: str | None = None
    field_type: str | None = None


@dataclass
class Symbol:
    name: str  # the qualified name, as the inventory writes it
    role: str  # module, class, function, method, attribute
    doc: str | None  # the first line of the docstring, markup read as text
    parent: str | None
    params: list[Param] = field(default_factory=list)
    labels: set[str] = field(default_factory=set)
    returns: str | None = None  # the description of the return value
    return_type: str | None = None  # the annotation, else the rtype field
    raises: list[str] = field(default_factory=list)
    versions: list[tuple[str, str]] = field(default_factory=list)  # directives: (kind, version)
    since: list[tuple[str, str]] = field(default_factory=list)  # @since fields
    decorator_deprecation: str | None = None  # the version, from @deprecated(Version(...))
    bases: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)  # names of the members it documents

    def shows_call(self) -> bool:
        return self.role in ("function", "method") and "property" not in self.labels


def _plain(text: str) -> str:
    return _MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None), text).strip()


def _first_line(doc: str | None) -> str | None:
    if not doc:
        return None
    for raw in doc.strip().splitlines():
        line = raw.strip()
        if line:
            return _plain(line)
    return None


def _fields(doc: str | None, symbol: Symbol) -> None:
    """Fields and version directives of a docstring, into ``symbol``."""
    if not doc:
        return
    by_name = {p.name.lstrip("*"): p for p in symbol.params}
    for line in doc.splitlines():
        directive = _DIRECTIVE.match(line)
        if directive:
            kind = {"versionadded": "added", "versionchanged": "changed"}.get(
                directive[1], directive[1]
            )
            symbol.versions.append((kind, directive[2]))
            continue
        match = _FIELD.match(line)
        if not match:
            continue
        tag, arg, text = match[1], match[2], _plain(match[3])
        if tag == "param" and arg in by_name:
            by_name[arg].description = text
        elif tag == "type" and arg in by_name:
            by_name[arg].field_type = text
        elif tag in ("return", "returns"):
            symbol.returns = text
        elif tag == "rtype":
            symbol.return_type = symbol.return_type or text
        elif tag in ("raise", "raises") and arg:
            symbol.raises.append(arg)
        elif tag == "since":
            symbol.since.append(("added", text))


def _params(args: ast.arguments) -> list[Param]:
    out: list[Param] = []

    def add(a: ast.arg, kind: str, default: ast.expr | None, star: str = "") -> None:
        ann = ast.unparse(a.annotation) if a.annotation is not None else None
        out.append(Param(star + a.arg, KINDS[kind], ast.unparse(default) if default else None, ann))

    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    for i, a in enumerate(positional):
        add(a, "posonly" if i < len(args.posonlyargs) else "arg", defaults[i])
    if args.vararg:
        add(args.vararg, "vararg", None, "*")
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        add(a, "kwonly", d)
    if args.kwarg:
        add(args.kwarg, "kwarg", None, "**")
    return out


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    names = []
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        names.append(ast.unparse(target).rsplit(".", 1)[-1])
    return names


def _deprecation(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call) and ast.unparse(dec.func).endswith("deprecated"):
            version = dec.args[0]
            if isinstance(version, ast.Call):
                parts = [ast.literal_eval(a) for a in version.args[1:]]
                return ".".join(str(p) for p in parts)
    return None


class _Reader:
    def __init__(self) -> None:
        self.symbols: dict[str, Symbol] = {}

    def add(self, symbol: Symbol) -> Symbol:
        self.symbols[symbol.name] = symbol
        if symbol.parent in self.symbols:
            self.symbols[symbol.parent].members.append(symbol.name)
        return symbol

    def module(self, path: Path, qualname: str) -> None:
        tree = ast.parse(path.read_text())
        doc = ast.get_docstring(tree)
        mod = self.add(Symbol(qualname, "module", _first_line(doc), _parent(qualname)))
        _fields(doc, mod)
        self.body(tree.body, qualname, "function")

    def body(self, nodes: list[ast.stmt], owner: str, fn_role: str) -> None:
        for i, node in enumerate(nodes):
            after = nodes[i + 1] if i + 1 < len(nodes) else None
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.function(node, owner, fn_role)
            elif isinstance(node, ast.ClassDef):
                self.klass(node, owner)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                self.attribute(node, after, owner, fn_role == "method")

    def attribute(
        self, node: ast.Assign | ast.AnnAssign, after: ast.stmt | None, owner: str, in_class: bool
    ) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            return
        name = targets[0].id
        if name.startswith("__") and name.endswith("__"):
            return  # __docformat__ and friends are not documented
        doc = _string(after)
        sym = self.add(Symbol(f"{owner}.{name}", "attribute", _first_line(doc), owner))
        if in_class:
            sym.labels.add("class_attribute")

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, owner: str, role: str) -> None:
        doc = ast.get_docstring(node)
        sym = Symbol(f"{owner}.{node.name}", role, _first_line(doc), owner)
        sym.params = _params(node.args)
        decorators = _decorator_names(node)
        sym.labels = {d for d in decorators if d in LABEL_DECORATORS}
        if isinstance(node, ast.AsyncFunctionDef):
            sym.labels.add("async")
        if "property" in sym.labels:
            sym.role = "attribute"
            sym.params = []
        # pydoctor shows no "-> None" (and no Returns field for it)
        annotation = ast.unparse(node.returns) if node.returns is not None else None
        sym.return_type = None if annotation == "None" else annotation
        sym.decorator_deprecation = _deprecation(node)
        _fields(doc, sym)
        self.add(sym)
        if node.name == "__init__":  # instance attributes with a docstring
            for i, stmt in enumerate(node.body):
                nxt = node.body[i + 1] if i + 1 < len(node.body) else None
                if (
                    isinstance(stmt, ast.Assign)
                    and isinstance(stmt.targets[0], ast.Attribute)
                    and _string(nxt) is not None
                ):
                    name = f"{owner}.{stmt.targets[0].attr}"
                    attr = Symbol(name, "attribute", _first_line(_string(nxt)), owner)
                    attr.labels.add("instance_attribute")
                    self.add(attr)

    def klass(self, node: ast.ClassDef, owner: str) -> None:
        doc = ast.get_docstring(node)
        name = f"{owner}.{node.name}"
        sym = self.add(Symbol(name, "class", _first_line(doc), owner))
        sym.bases = [ast.unparse(b) for b in node.bases]
        _fields(doc, sym)
        self.body(node.body, name, "method")
        for line in (doc or "").splitlines():  # @ivar/@cvar/:ivar: document attributes
            match = _FIELD.match(line)
            if match and match[1] in ("ivar", "cvar") and match[2]:
                attr = f"{name}.{match[2]}"
                if attr in self.symbols:
                    self.symbols[attr].doc = self.symbols[attr].doc or _plain(match[3])
                else:
                    ivar = self.add(Symbol(attr, "attribute", _plain(match[3]), name))
                    kind = "instance_attribute" if match[1] == "ivar" else "class_attribute"
                    ivar.labels.add(kind)
        init = self.symbols.get(f"{name}.__init__")
        if init is not None:
            sym.params = [p for p in init.params if p.name not in ("self", "cls")]


def _string(node: ast.stmt | None) -> str | None:
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ):
        return node.value.value
    return None


def _parent(qualname: str) -> str | None:
    return qualname.rsplit(".", 1)[0] if "." in qualname else None


def read_sources(root: Path = PYSRC / PACKAGE) -> dict[str, Symbol]:
    """Every symbol of the package, by qualified name."""
    reader = _Reader()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        reader.module(path, ".".join(parts))
    return reader.symbols


def expected_versions(symbol: Symbol, decorator_deprecations: bool) -> list[tuple[str, str]]:
    """The (kind, version) notes the page shows: the deprecation decorator's first (it is
    written before the docstring) where the pydoctor release renders it, then the
    docstring's directives, then its ``@since`` (a field, after the body)."""
    out: list[tuple[str, str]] = []
    if symbol.decorator_deprecation and decorator_deprecations:
        out.append(("deprecated", symbol.decorator_deprecation))
    return out + symbol.versions + symbol.since


def as_dict(symbol: Symbol) -> dict[str, Any]:
    """For messages."""
    return {k: v for k, v in symbol.__dict__.items() if v}

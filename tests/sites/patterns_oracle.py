"""Ground truth of the pattern fixture sites (``patterns_src``), written by reading the
sources (``mkpat/shapes.py``, ``pdpat/bars.py``), never the built HTML or the extractor.

Each symbol's fields as the sources state them: parameters ``(name, kind, type, default,
description)`` (kind None: a class docstring's, no signature shown), the names a
docstring documents that its signature lacks ``(name, description)``, returns ``(type,
description)``, raises ``(type, description)`` and version notes ``(kind, version)``.
What a generator version writes differently (the spelling of an annotation, whether
overloads are shown) is named by the version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PK = "positional-or-keyword"
KW = "keyword-only"


@dataclass(frozen=True)
class Truth:
    params: tuple[tuple[str, str | None, str | None, str | None, str | None], ...] = ()
    doc_only: tuple[tuple[str, str], ...] = ()
    returns: tuple[tuple[str | None, str | None], ...] = ()
    raises: tuple[tuple[str, str], ...] = ()
    versions: tuple[tuple[str, str], ...] = ()
    labels: frozenset[str] = field(default_factory=frozenset)
    doc: str = ""  # what the plain doc starts with


# -- mkpat (mkdocstrings) -----------------------------------------------------------------

_SHAPE_PARAMS = (
    ("name", None, "str", None, "The shape's name."),
    ("sides", None, "int", None, "How many sides it has."),
)
MK: dict[str, Truth] = {
    "mkpat.shapes": Truth(doc="Shapes: a base class, a subclass that inherits its members"),
    "mkpat.shapes.Shape": Truth(
        _SHAPE_PARAMS, raises=(("ValueError", "When sides is negative."),), doc="A shape with"
    ),
    "mkpat.shapes.Shape.describe": Truth(
        (("verbose", PK, "bool", "False", "Say more."),),
        returns=(("str", "The description."),),
        doc="Describe the shape.",
    ),
    "mkpat.shapes.Shape.scale": Truth(
        (("factor", PK, "float", None, "The scale factor."),),
        (("copy", "Copy the shape first; documented, not in the signature."),),
        returns=(("Shape", "The scaled shape."),),
        raises=(("ValueError", "When factor is not positive."),),
        doc="Scale the shape.",
    ),
    "mkpat.shapes.Circle": Truth((("radius", None, "float", None, "The radius."),), doc="A round"),
    "mkpat.shapes.Circle.roll": Truth(
        (
            ("distance", PK, "float", None, "How far to roll."),
            (
                "verify",
                KW,
                "bool",
                "True",
                "Either True to check the path first, False to roll blindly, "
                "or a str naming a map.",
            ),
        ),
        returns=(("float", "The distance rolled."),),
        doc="Roll the circle along a path.",
    ),
    "mkpat.shapes.area": Truth(
        (
            ("shape", PK, "Shape", None, "The shape to measure."),
            ("unit", PK, "str", "'cm'", 'The unit, "cm" by default or "in".'),
        ),
        (("precision", "Digits to round to; documented, not in the signature."),),
        returns=(("float", "The area in square units."),),
        raises=(("TypeError", "When shape is no shape."),),
        doc="The area of a shape.",
    ),
    # plain Markdown "**Parameters:**": the code spans of a description are no type or
    # default (the signature states neither for verify)
    "mkpat.shapes.fetch": Truth(
        (
            ("url", PK, "str", None, "The URL to fetch."),
            (
                "verify",
                KW,
                None,
                None,
                "(optional) Either True to use the default bundle, False to skip the check.",
            ),
        ),
        returns=(("bytes", None),),
        doc="Fetch a shape's description",
    ),
    # overloads: the implementation's signature is the one shown in every version (1.x
    # shows the overloads' above it); the name no signature has is doc-only
    "mkpat.shapes.pick": Truth(
        (
            ("value", PK, "int | str", None, "The value to pick."),
            ("strict", PK, "bool", "False", "Refuse values of another type."),
        ),
        (("fallback", "Picked instead; documented, in no signature."),),
        returns=(("int | str", None),),
        doc="Pick a value.",
    ),
    "mkpat.shapes.noted": Truth(
        returns=(("None", None),),
        versions=(("added", "1.0"), ("changed", "1.1"), ("changed", "1.2"), ("deprecated", "2.0")),
        doc="A function whose docstring has consecutive version directives.",
    ),
    "mkpat": Truth(doc="Patterns of documentation pages"),
}
# The class docstring's default, where the handler takes __init__'s into its section (the
# list layout of python 1.1 does not).
MK_CLASS_DEFAULTS = {"pat022-list": False, "pat022-sep": False}
# griffe 0.32 (python 1.1) writes ``fetch(url: str, *, verify: str)``: the unannotated
# keyword-only parameter shown with the annotation of the one before it; the item states
# what the page does.
MK_WRITTEN_TYPES = {
    "pat022-list": {("mkpat.shapes.fetch", "verify"): "str"},
    "pat022-sep": {("mkpat.shapes.fetch", "verify"): "str"},
}
# Text of the page's template that is no text of the docstrings'.
MK_CHROME = ("Name Type Description", "Type Description Default", "DESCRIPTION",
             "Classes Functions", "Attributes Classes")  # fmt: skip


def mk_truth(name: str, anchor: str) -> tuple[Truth, dict[str, Any]] | None:
    """(truth, the relation fields: parent, inherited_from, alias_of) of an inventory
    entry of the mkpat site: a symbol of ``mkpat.shapes``, its re-export under ``mkpat``
    (the package page renders a copy under the re-exported name), or a member of
    ``Circle`` inherited from ``Shape`` (listed at the anchor of ``Shape``'s)."""
    shapes = name == "mkpat" or name.startswith("mkpat.shapes")
    canonical = name if shapes else "mkpat.shapes." + name.removeprefix("mkpat.")
    parts = canonical.rsplit(".", 1)
    relation: dict[str, Any] = {"parent": name.rsplit(".", 1)[0] if "." in name else None}
    if canonical not in MK and parts[0].endswith(".Circle"):
        canonical = parts[0].removesuffix("Circle") + "Shape." + parts[1]
        relation["inherited_from"] = anchor.rsplit(".", 1)[0]
    truth = MK.get(canonical)
    return None if truth is None else (truth, relation)


# -- MATLAB (mkdocstrings-matlab) ---------------------------------------------------------

# The sources in patterns_src/matlab: a function shown without a heading (mkdocstrings'
# root object: no signature, so its documented arguments are its params, kind null) and a
# class with its constructor and a method (the page hides ``obj``).
MAT: dict[str, Truth] = {
    "addtwo": Truth(
        (
            ("a", None, None, None, "The first number."),
            ("b", None, None, None, "The second number."),
        ),
        returns=((None, "The sum."),),
        doc="ADDTWO Add two numbers.",
    ),
    "Counter": Truth(doc="COUNTER A counter that counts up."),
    "Counter.Counter": Truth(
        (("start", PK, None, None, "The first count."),), doc="COUNTER Make a counter."
    ),
    "Counter.increment": Truth(
        (("by", PK, None, None, "How much to add."),), doc="INCREMENT Count up."
    ),
}


# -- pdpat (pydoctor) ---------------------------------------------------------------------


def pd_truth(major: int) -> dict[str, Truth]:
    """pdpat's symbols as pydoctor ``major`` documents them: 24 and later spell the
    annotations as PEP 604 does; 23 and later show the overloads (and their parameters:
    ``strict`` is the second overload's, its default ``...``), 21 and 22 the
    implementation's signature, without annotations (the types are the field tables')."""
    optional = "type[Segment] | None" if major >= 24 else "Optional[Type[Segment]]"
    union = "int | str" if major >= 24 else "Union[int, str]"
    overloads = major >= 23
    return {
        "pdpat.bars.Bar": Truth(
            (
                ("size", PK, "int", None, "The bar's size, in cells."),
                ("segment", PK, optional, "None", "The class of the bar's segments."),
            ),
            raises=(("ValueError", "When the size is negative."),),
            doc="A bar of a given size.",
        ),
        "pdpat.bars.Bar.grow": Truth(
            (("self", PK, None, None, None), ("by", PK, "int", "1", "How many cells to add.")),
            (("animate", "Animate the growth; documented, not in the signature."),),
            returns=(("int", "The new size."),),
            doc="Grow the bar.",
        ),
        "pdpat.bars.Segment": Truth(
            (("width", PK, "int", None, "The segment's width."),), doc="One segment of a bar."
        ),
        "pdpat.bars.make": Truth(
            (
                ("size", PK, "int", None, "The size of the bar."),
                ("segment", PK, optional, "None", "The class of its segments."),
            ),
            (("colour", "The bar's colour; documented, not in the signature."),),
            returns=(("Bar", "The bar."),),
            doc="Make a bar.",
        ),
        "pdpat.bars.pick": Truth(
            (
                ("value", PK, "int" if overloads else union, None, "The value to pick."),
                (
                    "strict",
                    PK,
                    "bool",
                    "..." if overloads else "False",
                    "Refuse values of another type.",
                ),
            ),
            (("fallback", "Picked instead; documented, in no signature."),),
            returns=((union, None),),
            labels=frozenset({"overload"} if overloads else ()),
            doc="Pick a value.",
        ),
    }


def written(truth: Truth, types: dict[str, str]) -> Truth:
    """``truth`` with the parameter types a generator writes otherwise (by name)."""
    params = tuple((n, k, types.get(n, t), d, s) for n, k, t, d, s in truth.params)
    return Truth(params, truth.doc_only, truth.returns, truth.raises, truth.versions,
                 truth.labels, truth.doc)  # fmt: skip


def compare(truth: Truth, item: dict[str, Any], class_defaults: bool = True) -> list[str]:
    """Every field of ``item`` that differs from ``truth``."""
    out = []
    params = [
        (p["name"], p["kind"], p["type"], p["default"], p["description"]) for p in item["params"]
    ]
    wanted = [
        (n, k, t, d if (k is not None or class_defaults) else None, s)
        for n, k, t, d, s in truth.params
    ]
    if class_defaults and any(k is None for _, k, *_ in truth.params):
        # a class docstring's parameter shows __init__'s default (sides=0)
        wanted = [(n, k, t, "0" if n == "sides" else d, s) for n, k, t, d, s in wanted]
    if params != wanted:
        out.append(f"params: expected {wanted}, got {params}")
    doc_only = [(p["name"], p["description"]) for p in item.get("doc_only_params", [])]
    if doc_only != list(truth.doc_only):
        out.append(f"doc_only_params: expected {list(truth.doc_only)}, got {doc_only}")
    returns = [(r["type"], r["description"]) for r in item["returns"]]
    if returns != list(truth.returns):
        out.append(f"returns: expected {list(truth.returns)}, got {returns}")
    raises = [(r["type"], r["description"]) for r in item["raises"]]
    if raises != list(truth.raises):
        out.append(f"raises: expected {list(truth.raises)}, got {raises}")
    versions = [(v["kind"], v["version"]) for v in item["versions"]]
    if versions != list(truth.versions):
        out.append(f"versions: expected {list(truth.versions)}, got {versions}")
    if not truth.labels <= set(item["labels"]):
        out.append(f"labels: expected {sorted(truth.labels)} among {item['labels']}")
    if not " ".join(item["doc"].split()).startswith(truth.doc):
        out.append(f"doc: expected to start with {truth.doc!r}, got {item['doc'][:80]!r}")
    return out

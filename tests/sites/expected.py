"""Ground truth for the fixture site in tests/sites/src, derived from the sources by hand
(never from running the extractor). Keys are ``domain:role:name`` as in the inventory.

What a field in an entry means (a field that is absent is not asserted):

``signature``
    The signature text a reader sees, compared after ``norm_sig`` on both sides: whitespace
    runs collapsed (a ``<br>`` between C++ template lines reads as a space), no space after
    ``(``/``[`` or before ``)``/``]``/``,``, a trailing comma before ``)`` dropped (Sphinx >= 7.1
    puts one after the last parameter of a wrapped signature), and ``→``/``->`` treated alike.
    ``¶``, permalink icons and ``[source]`` are *not* normalised away: they must not be there.
    Every combo renders the same text for every symbol (checked by hand on 4.5 to 9.0), so
    there is no per-version form except the wrapped signature, which the rules above cover.
``signature_contains``
    Each string must occur in the normalised signature. Used where several ``<dt>`` share one
    body: overloads (later dts have no id; the entry's signature should show every line) and
    ``smallest``/``largest`` (each name has its own dt; whether the sibling line is included
    is left open).
``doc``
    Prefix of the whitespace-collapsed ``doc`` (the first paragraph). For section-like
    entries (modules, labels on sections, ``std:doc``) a leading section title is allowed
    before it.
``doc_excludes``
    Texts that must not occur in ``doc``: members' bodies are not part of a container's doc,
    and a label's doc stops at its section.
``labels``
    Exact, in order: the keywords Sphinx writes before the name that are labels
    (``classmethod``, ``static`` as ``staticmethod``, ``property``...; never ``class``).
``title``, ``parent``
    Exact (``None`` means "absent or empty").
``params``
    Ordered parameter names (a leading ``*``/``**`` is ignored, and bare ``*``/``/``
    separators are not parameters). Per parameter, ``type``/``default`` are exact after
    whitespace collapsing (a tuple lists accepted alternatives, e.g. the annotation or the
    field-list type; ``None`` means "none shown"), ``description`` is a prefix, ``kind``
    (``positional-or-keyword``, ``keyword-only``...) exact where given.
``returns``
    ``None``: no return information. Else ``type`` exact (return annotation or ``:rtype:``),
    ``description`` prefix.
``raises``
    Ordered exception types, descriptions as prefixes.
``versions``
    Ordered ``(kind, version, text)``; kind is ``added``/``changed``/``deprecated``; text is a
    prefix of the explanation without the "Changed in version X:" lead-in; ``ANY`` text when
    the directive has no explanation (Sphinx renders only "New/Added in version X.").
"""

from __future__ import annotations

import re
from typing import Any, Final


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY: Final = _Any()


def P(
    name: str, type: Any = ANY, default: Any = ANY, description: Any = ANY, kind: Any = ANY
) -> dict[str, Any]:
    return {
        "name": name,
        "type": type,
        "default": default,
        "description": description,
        "kind": kind,
    }


def R(type: Any = ANY, description: Any = ANY) -> dict[str, Any]:
    return {"type": type, "description": description}


def X(type: str, description: Any = ANY) -> dict[str, Any]:
    return {"type": type, "description": description}


def V(kind: str, version: str, text: Any = ANY) -> dict[str, Any]:
    return {"kind": kind, "version": version, "text": text}


def norm_ws(text: str | None) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def norm_sig(text: str | None) -> str:
    s = norm_ws((text or "").replace("\u2192", "->"))
    s = re.sub(r"([(\[])\s+", r"\1", s)
    s = re.sub(r"\s+([)\],])", r"\1", s)
    return s.replace(",)", ")")


# Pages that are not content (built-in std labels point at them); never extracted.
NON_CONTENT_PAGES: Final = frozenset({"genindex.html", "py-modindex.html", "search.html"})

# Roles whose entries are described by a dt (object descriptions): non-empty signature.
NO_SIGNATURE_ROLES: Final = frozenset({"std:label", "std:doc", "std:term", "py:module"})

# Roles whose doc must not contain the docs of their members.
CONTAINER_ROLES: Final = frozenset(
    {"py:class", "py:exception", "py:module", "c:struct", "cpp:class", "cpp:enum"}
)

_CORE = "fixturepkg.core"
_STY = "fixturepkg.styles"

EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- autodoc: fixturepkg.core
    f"py:module:{_CORE}": dict(
        doc="Core helpers of the fixture package.",
        doc_excludes=["Default widget size used", "Add two integers", "A rectangular widget"],
    ),
    f"py:data:{_CORE}.DEFAULT_SIZE": dict(
        signature=f"{_CORE}.DEFAULT_SIZE: int = 3",
        doc="Default widget size used when none is given.",
        parent=_CORE,
    ),
    f"py:function:{_CORE}.add": dict(
        signature=f"{_CORE}.add(a: int, b: int = 2) -> int",
        doc="Add two integers and return the sum.",
        doc_excludes=["Multiply a value"],
        parent=_CORE,
        params=[
            P("a", "int", None, "The first operand."),
            P("b", "int", "2", "The second operand."),
        ],
        returns=R("int", "The sum of both operands."),
        raises=[X("OverflowError", "If the result does not fit in a machine word.")],
        versions=[V("added", "1.1")],
    ),
    f"py:function:{_CORE}.scale": dict(
        signature=f"{_CORE}.scale(value: float, factor: float = 1.5, *, clamp: bool = False)"
        " -> float",
        doc="Multiply a value by a factor.",
        parent=_CORE,
        params=[
            P("value", "float", None, "The number to scale.", "positional-or-keyword"),
            P("factor", "float", "1.5", "The multiplier.", "positional-or-keyword"),
            P("clamp", "bool", "False", "Limit the result to the unit interval.", "keyword-only"),
        ],
        returns=R("float", "The scaled number."),
        raises=[],
        versions=[V("changed", "1.3", "The clamp keyword was added.")],
    ),
    f"py:function:{_CORE}.legacy_sum": dict(
        signature=f"{_CORE}.legacy_sum(values: list) -> int",
        doc="Sum a list of integers the old way.",
        parent=_CORE,
        params=[P("values", "list", None)],
        returns=R("int"),
        versions=[V("deprecated", "1.4", "Call add in a loop instead.")],
    ),
    f"py:function:{_CORE}.convert": dict(  # typing.overload: two dts, the second without id
        signature_contains=[
            f"{_CORE}.convert(value: int) -> str",
            f"{_CORE}.convert(value: str) -> int",
        ],
        doc="Convert between an integer and its decimal text.",
        parent=_CORE,
    ),
    f"py:function:{_CORE}.configure_everything": dict(  # wrapped in a <dl> in the dt on >= 7.1
        signature=f"{_CORE}.configure_everything(alpha: int, beta: str = 'b', gamma: float = 0.5,"
        " delta: bool = True, epsilon: int = 7) -> dict",
        doc="Configure every subsystem at once with one very long signature.",
        doc_excludes=["alpha: int"],
        parent=_CORE,
        params=[
            P("alpha", "int", None, "Primary knob."),
            P("beta", "str", "'b'"),
            P("gamma", "float", "0.5"),
            P("delta", "bool", "True"),
            P("epsilon", "int", "7", "Last knob."),
        ],
        returns=R("dict"),
        raises=[],
        versions=[],
    ),
    f"py:exception:{_CORE}.FixtureError": dict(
        signature=f"exception {_CORE}.FixtureError",
        doc="Raised when a fixture operation cannot be completed.",
        parent=_CORE,
        params=[],
    ),
    f"py:class:{_CORE}.Widget": dict(
        signature=f"class {_CORE}.Widget(name: str, size: int = 1)",
        doc="A rectangular widget with a name and a size.",
        doc_excludes=[
            "Category shared by every widget",
            "Settings holder nested",
            "Whether the widget is drawn",
            "Change the widget dimensions",
            "Surface covered by the widget",
            "Build a widget from",
            "Tell whether a size",
            "Height became optional",
        ],
        parent=_CORE,
        params=[
            P("name", "str", None, "Human readable widget name."),
            P("size", "int", "1", "Edge length in pixels."),
        ],
        raises=[X("ValueError", "If the size is negative.")],
        versions=[],
    ),
    f"py:attribute:{_CORE}.Widget.kind": dict(
        signature="kind: str = 'widget'",
        doc="Category shared by every widget.",
        parent=f"{_CORE}.Widget",
    ),
    f"py:class:{_CORE}.Widget.Config": dict(
        signature="class Config",
        labels=[],  # "class" is the role, not a label
        doc="Settings holder nested inside the widget class.",
        doc_excludes=["Whether the widget is drawn"],
        parent=f"{_CORE}.Widget",
    ),
    f"py:attribute:{_CORE}.Widget.Config.visible": dict(
        signature="visible: bool = True",
        doc="Whether the widget is drawn on screen.",
        parent=f"{_CORE}.Widget.Config",
    ),
    f"py:method:{_CORE}.Widget.resize": dict(
        signature="resize(width: int, height: int = 0) -> None",
        labels=[],
        doc="Change the widget dimensions in place.",
        parent=f"{_CORE}.Widget",
        params=[
            P("width", "int", None, "New width in pixels."),
            P("height", "int", "0", "New height in pixels, zero keeps it square."),
        ],
        raises=[X("FixtureError", "If the widget is frozen.")],
        versions=[V("changed", "1.2", "Height became optional.")],
    ),
    f"py:property:{_CORE}.Widget.area": dict(
        signature="property area: int",
        labels=["property"],
        doc="Surface covered by the widget in square pixels.",
        parent=f"{_CORE}.Widget",
    ),
    f"py:method:{_CORE}.Widget.from_pair": dict(
        signature="classmethod from_pair(name: str, size: int)",
        labels=["classmethod"],
        doc="Build a widget from a name and a size.",
        parent=f"{_CORE}.Widget",
        params=[P("name", "str", None), P("size", "int", None)],
        returns=None,
    ),
    f"py:method:{_CORE}.Widget.validate": dict(
        signature="static validate(size: int) -> bool",
        labels=["staticmethod"],
        doc="Tell whether a size is acceptable.",
        parent=f"{_CORE}.Widget",
        params=[P("size", "int", None)],
        returns=R("bool"),
    ),
    # ------------------------------------------------------- napoleon: fixturepkg.styles
    f"py:module:{_STY}": dict(
        doc="Docstrings in numpydoc and Google styles, rendered by sphinx.ext.napoleon.",
        doc_excludes=["Fetch a resource"],
    ),
    f"py:function:{_STY}.numpy_fetch": dict(
        signature=f"{_STY}.numpy_fetch(path: str, retries: int = 3) -> bool",
        doc="Fetch a resource following numpydoc conventions.",
        parent=_STY,
        params=[
            P("path", "str", None, "Location of the resource."),
            P("retries", ("int", "int, optional"), "3", "How many attempts to make."),
        ],
        returns=R("bool", "Whether the fetch succeeded."),
        raises=[X("TimeoutError", "If every attempt timed out.")],
        versions=[],
    ),
    f"py:function:{_STY}.google_lookup": dict(
        signature=f"{_STY}.google_lookup(key: str, default: int = 0) -> int",
        doc="Look up a key following Google conventions.",
        parent=_STY,
        params=[
            P("key", "str", None, "The key to look up."),
            P("default", "int", "0", "Value returned when the key is missing."),
        ],
        returns=R("int", "The stored value."),
        raises=[X("KeyError", "If the key is empty.")],
    ),
    f"py:class:{_STY}.NumpyPoint": dict(
        signature=f"class {_STY}.NumpyPoint(x: float, y: float)",
        doc="A point whose docstring uses numpydoc sections.",
        doc_excludes=["Measure the straight line", "The Euclidean distance"],
        parent=_STY,
        params=[
            P("x", "float", None, "Horizontal coordinate."),
            P("y", "float", None, "Vertical coordinate."),
        ],
    ),
    f"py:method:{_STY}.NumpyPoint.distance": dict(
        signature="distance(other) -> float",
        doc="Measure the straight line distance to another point.",
        parent=f"{_STY}.NumpyPoint",
        params=[P("other", ("NumpyPoint",), None, "The point to measure to.")],
        returns=R("float", "The Euclidean distance."),
    ),
    # ------------------------------------------------- hand-written py directives: manualmod
    # (module target not at a section start: span.target on < 9, id on the next dl on 9.x;
    # the module has no content of its own, so only status is checked)
    "py:module:manualmod": dict(),
    "py:function:manualmod.connect": dict(
        signature="manualmod.connect(host, port=80, *, timeout=None)",
        doc="Open a connection to a server.",
        doc_excludes=["Return the smaller"],
        parent="manualmod",
        params=[
            P("host", "str", None, "Host name to connect to."),
            P("port", "int", "80", "TCP port number."),
            P("timeout", "float or None", "None", "Seconds to wait before giving up."),
        ],
        returns=R("Connection", "An open connection handle."),
        raises=[
            X("ConnectionError", "If the server refuses the connection."),
            X("TimeoutError", "If the timeout elapses."),
        ],
        versions=[V("added", "2.0"), V("changed", "2.1", "Added the timeout keyword.")],
    ),
    "py:function:manualmod.smallest": dict(
        signature_contains=["manualmod.smallest(a, b)"],
        doc="Return the smaller or the larger of two values.",
        parent="manualmod",
        params=[P("a", None, None), P("b", None, None)],
        returns=None,
        raises=[],
        versions=[],
    ),
    "py:function:manualmod.largest": dict(
        signature_contains=["manualmod.largest(a, b)"],
        doc="Return the smaller or the larger of two values.",
        doc_excludes=["Parse a number"],
        parent="manualmod",
        params=[P("a", None, None), P("b", None, None)],
        returns=None,
    ),
    "py:function:manualmod.parse": dict(  # two signatures sharing one body, same name
        signature_contains=[
            "manualmod.parse(text: str) -> int",
            "manualmod.parse(data: bytes) -> int",
        ],
        doc="Parse a number from text or from raw bytes.",
        parent="manualmod",
    ),
    "py:class:manualmod.Connection": dict(
        signature="class manualmod.Connection(host, port)",
        doc="A live connection to one server.",
        doc_excludes=["Send a payload", "Name of the remote host", "Payload to send"],
        parent="manualmod",
        params=[P("host", None, None), P("port", None, None)],
        raises=[],
    ),
    "py:method:manualmod.Connection.send": dict(
        signature="send(data)",
        doc="Send a payload over the connection.",
        parent="manualmod.Connection",
        params=[P("data", "bytes", None, "Payload to send.")],
        returns=R("int", "Number of bytes sent."),
        raises=[],
    ),
    "py:attribute:manualmod.Connection.host": dict(
        signature="host: str",
        doc="Name of the remote host.",
        parent="manualmod.Connection",
    ),
    "py:data:manualmod.DEFAULT_PORT": dict(
        signature="manualmod.DEFAULT_PORT = 80",
        doc="Port used when none is given.",
        parent="manualmod",
    ),
    "py:exception:manualmod.ProtocolError": dict(
        signature="exception manualmod.ProtocolError",
        doc="Raised when the server sends a malformed reply.",
        parent="manualmod",
        versions=[V("deprecated", "2.2", "Catch ConnectionError instead.")],
    ),
    # ----------------------------------------------------------------------------- C domain
    "c:macro:FX_MAX_SIZE": dict(
        signature="FX_MAX_SIZE",
        doc="Largest size accepted by the library.",
        parent=None,
    ),
    "c:macro:FX_CLAMP": dict(
        signature="FX_CLAMP(x, lo, hi)",
        doc="Clamp a value into a closed range.",
        params=[P("x"), P("lo"), P("hi")],
    ),
    "c:type:fx_handle": dict(
        signature="type fx_handle",
        doc="Opaque handle to an open resource.",
    ),
    "c:struct:fx_point": dict(
        signature="struct fx_point",
        doc="A point in the plane.",
        doc_excludes=["Horizontal coordinate of the point", "Vertical coordinate of the point"],
        parent=None,
    ),
    "c:member:fx_point.x": dict(
        signature="int x",
        doc="Horizontal coordinate of the point.",
        parent="fx_point",
    ),
    "c:member:fx_point.y": dict(
        signature="int y",
        doc="Vertical coordinate of the point.",
        parent="fx_point",
    ),
    "c:function:fx_open": dict(
        signature="int fx_open(const char *path, int flags)",
        doc="Open the resource found at a path.",
        parent=None,
        params=[
            P("path", description="Filesystem path of the resource."),
            P("flags", description="Bitwise OR of open flags."),
        ],
        returns=R(description="A non-negative handle, or -1 on error."),
        raises=[],
        versions=[V("added", "1.2")],
    ),
    # c:functionParam entries share the function's anchor.
    "c:functionParam:fx_open.path": dict(
        signature_contains=["fx_open(const char *path, int flags)"],
        parent="fx_open",
    ),
    "c:functionParam:fx_open.flags": dict(
        signature_contains=["fx_open(const char *path, int flags)"],
        parent="fx_open",
    ),
    "c:member:fx_verbose": dict(  # written as c:var, inventoried as c:member
        signature="int fx_verbose",
        doc="Verbosity level of the library.",
        parent=None,
    ),
    # --------------------------------------------------------------------------- C++ domain
    "cpp:class:fx::Buffer": dict(
        signature="template<typename T> class fx::Buffer",
        doc="A growable buffer of values.",
        doc_excludes=["Number of stored elements", "Pointer to the first stored element"],
    ),
    "cpp:templateParam:fx::Buffer::T": dict(
        signature_contains=["class fx::Buffer"],
        parent="fx::Buffer",
    ),
    "cpp:function:fx::Buffer::size": dict(
        signature="std::size_t size() const",
        doc="Number of stored elements.",
        parent="fx::Buffer",
        params=[],
    ),
    "cpp:member:fx::Buffer::data": dict(
        signature="T *data",
        doc="Pointer to the first stored element.",
        parent="fx::Buffer",
    ),
    "cpp:function:fx::clamp": dict(
        signature="template<typename T> T fx::clamp(T value, T lo, T hi)",
        doc="Limit a value to a closed range.",
        params=[
            P("value", description="The value to limit."),
            P("lo", description="Lower bound."),
            P("hi", description="Upper bound."),
        ],
        returns=R(description="The limited value."),
        raises=[],
    ),
    "cpp:templateParam:fx::clamp::T": dict(
        signature_contains=["fx::clamp(T value, T lo, T hi)"],
        parent="fx::clamp",
    ),
    "cpp:functionParam:fx::clamp::value": dict(
        signature_contains=["fx::clamp(T value, T lo, T hi)"],
        parent="fx::clamp",
    ),
    "cpp:functionParam:fx::clamp::lo": dict(parent="fx::clamp"),
    "cpp:functionParam:fx::clamp::hi": dict(parent="fx::clamp"),
    "cpp:enum:fx::Mode": dict(
        signature="enum class fx::Mode",
        doc="How a buffer grows.",
        doc_excludes=["Grow by a constant amount", "Grow by doubling"],
    ),
    "cpp:enumerator:fx::Mode::Linear": dict(
        signature="enumerator Linear",
        doc="Grow by a constant amount.",
        parent="fx::Mode",
    ),
    "cpp:enumerator:fx::Mode::Doubling": dict(
        signature="enumerator Doubling",
        doc="Grow by doubling the capacity.",
        parent="fx::Mode",
    ),
    # --------------------------------------------------------------------------- std domain
    "std:doc:index": dict(
        title="Fixture documentation",
        doc="This site is the ground truth of the invcrawl extraction tests.",
    ),
    "std:doc:api": dict(title="Core API", doc="Core helpers of the fixture package."),
    "std:doc:styles": dict(title="Docstring styles"),
    "std:doc:manual": dict(
        title="Manual API",
        doc="These objects are described by hand with Python domain directives.",
    ),
    "std:doc:capi": dict(
        title="C API",
        doc="The C library exposes a handful of functions, macros and types.",
    ),
    "std:doc:cppapi": dict(title="C++ API", doc="The C++ wrapper lives in the fx namespace."),
    "std:doc:usage": dict(
        title="Usage guide",
        doc="This guide explains the command line, the environment and the configuration.",
    ),
    # label before a section: the id is an empty span inside the section
    "std:label:cli-options": dict(
        title="Command line",
        doc="The fixturetool program accepts these options.",
        doc_excludes=["Colour used to draw widgets", "A small rectangular thing"],
    ),
    # labels before a paragraph: the id is on the <p>
    "std:label:landing-paragraph": dict(
        doc="This labelled paragraph introduces the fixture site to its readers.",
        doc_excludes=["This site is the ground truth"],
    ),
    "std:label:config-note": dict(
        doc="Configuration values are read once at startup and never reloaded.",
        doc_excludes=["A small rectangular thing", "Colour used to draw widgets"],
    ),
    # program options: both names share the first name's anchor
    "std:cmdoption:fixturetool.-h": dict(
        signature="-h, --help",
        doc="Show a help message and exit.",
        doc_excludes=["Write the result"],
    ),
    "std:cmdoption:fixturetool.--help": dict(
        signature="-h, --help",
        doc="Show a help message and exit.",
    ),
    "std:cmdoption:fixturetool.-o": dict(
        signature="-o <file>, --output <file>",
        doc="Write the result to the given file.",
    ),
    "std:cmdoption:fixturetool.--output": dict(
        signature="-o <file>, --output <file>",
        doc="Write the result to the given file.",
    ),
    "std:envvar:FIXTURE_HOME": dict(
        signature="FIXTURE_HOME",
        doc="Directory where fixture data is stored.",
        versions=[],
    ),
    # custom object type from conf.py (app.add_object_type)
    "std:confval:fixture_color": dict(
        signature="fixture_color",
        doc="Colour used to draw widgets.",
        doc_excludes=["Configuration values are read once"],
        versions=[V("added", "1.5")],
    ),
    # glossary: widget and gadget share one definition
    "std:term:widget": dict(
        doc="A small rectangular thing drawn on the screen.", doc_excludes=["Known input"]
    ),
    "std:term:gadget": dict(
        doc="A small rectangular thing drawn on the screen.", doc_excludes=["Known input"]
    ),
    "std:term:fixture": dict(doc="Known input whose expected output is recorded."),
}

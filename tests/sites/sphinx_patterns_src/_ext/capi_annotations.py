"""CPython's ``c_annotations`` extension (Doc/tools/extensions/c_annotations.py of 3.11),
cut down: before the body of each C function it writes the reference-count annotation
("Return value: New reference.") and the Stable ABI one ("Part of the Stable ABI since
version 3.7."), from the table below instead of CPython's refcounts.dat and stable_abi.dat,
as the same ``emphasis`` nodes with the classes ``refcount`` and ``stableabi``."""

from docutils import nodes
from sphinx import addnodes

REFCOUNT = {"PyList_New": "New", "PyList_GetItem": "Borrowed", "PyErr_NoMemory": "Null"}
STABLE = {"PyList_New": "3.2", "PyList_GetItem": "3.7", "PyErr_NoMemory": "3.2"}
TEXT = {
    "New": "Return value: New reference.",
    "Borrowed": "Return value: Borrowed reference.",
    "Null": "Return value: Always NULL.",
}


def add_annotations(app, doctree):
    for node in list(doctree.traverse(addnodes.desc_content)):
        par = node.parent
        if par["domain"] != "c":
            continue
        ids = par[0]["ids"] if par[0]["ids"] else []
        name = ids[0].rsplit(".", 1)[-1].removeprefix("c.") if ids else ""
        since = STABLE.get(name)
        if since is not None:
            emph = nodes.emphasis(" Part of the ", " Part of the ", classes=["stableabi"])
            ref = addnodes.pending_xref(
                "Stable ABI",
                refdomain="std",
                reftarget="stable",
                reftype="ref",
                refexplicit="False",
            )
            ref += nodes.Text("Stable ABI")
            emph += ref
            # CPython writes the first release of the ABI without a version
            emph += nodes.Text("." if since == "3.2" else f" since version {since}.")
            node.insert(0, emph)
        kind = REFCOUNT.get(name)
        if kind is not None:
            node.insert(0, nodes.emphasis(TEXT[kind], TEXT[kind], classes=["refcount"]))


def setup(app):
    app.connect("doctree-read", add_annotations)
    return {"parallel_read_safe": True}

"""Plain `invcrawl show` (invcrawl/symbol_cmds.py): the doc as written, code blocks and
paragraphs kept, and each parameter's description, not one paragraph of text."""

from __future__ import annotations

from invcrawl.symbol_cmds import _item_text

ITEM = {
    "key": "py:function:json.loads",
    "name": "json.loads",
    "signature": "json.loads(s, *, cls=None)",
    "url": "https://docs.python.org/3/library/json.html#json.loads",
    "params": [
        {"name": "s", "kind": "positional-or-keyword", "type": "str", "default": None,
         "description": "The document to parse."},
        {"name": "cls", "kind": "keyword-only", "type": None, "default": "None",
         "description": None},
    ],
    "returns": [{"name": None, "type": "object", "description": "The decoded value."}],
    "raises": [{"type": "JSONDecodeError", "description": "If s is not valid JSON.\x1b[2J"}],
    "doc": "Deserialize s. >>> json.loads('[1]') [1]",
    "doc_markdown": "Deserialize *s*.\n\n```python\n>>> json.loads('[1]')\n[1]\n```\n",
}  # fmt: skip


def test_show_keeps_code_blocks_and_parameter_descriptions() -> None:
    text = _item_text(ITEM, "Python 3.11")
    lines = text.splitlines()
    assert "  param s: str [positional-or-keyword]" in lines
    assert lines[lines.index("  param s: str [positional-or-keyword]") + 1] == (
        "      The document to parse."
    )
    assert "  param cls = None [keyword-only]" in lines
    assert "  returns object: The decoded value." in lines
    assert any(
        line.startswith("  raises JSONDecodeError: If s is not valid JSON.") for line in lines
    )
    assert "\x1b" not in text  # what a site wrote is escaped
    assert text.endswith("Deserialize *s*.\n\n```python\n>>> json.loads('[1]')\n[1]\n```")


def test_an_item_without_markdown_shows_its_doc() -> None:
    item = {**ITEM, "doc_markdown": ""}
    assert _item_text(item, "Python 3.11").endswith("\n\n" + ITEM["doc"])


def test_show_names_what_the_doc_links_to_by_key_where_the_page_holds_it() -> None:
    refs = [{"key": "py:function:json.dumps"}, {"name": "str", "url": "https://x/#str"}]
    refs += [{"name": f"n{i}\x1b[2J", "url": f"https://x/#n{i}"} for i in range(14)]
    lines = _item_text({**ITEM, "references": refs}, "Python 3.11").splitlines()
    shown = next(line for line in lines if line.startswith("  links to "))
    assert shown.startswith("  links to py:function:json.dumps, str, n0")
    assert shown.endswith("n9\\x1b[2J and 4 more") and "\x1b" not in shown  # 12, escaped
    assert not any(line.startswith("  links to") for line in _item_text(ITEM, "P 1").splitlines())

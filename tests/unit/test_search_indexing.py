"""An item's search index entries and vector words in one pass (common/search/indexing.py)
are exactly what index_terms, term_log, term_tag and item_words give apart."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from invcrawl.common.search import terms as t
from invcrawl.common.search.indexing import Index, item_index
from invcrawl.common.search.postings import term_log, term_tag
from invcrawl.common.search.semantic import item_words


def apart(name: str, summary: str, logs: int) -> Index:
    terms = tuple((term_log(term, logs), term_tag(term)) for term in t.index_terms(name, summary))
    return terms, tuple(item_words(name, summary))


# names of many components, repeated ones, long ones (cut terms), camel case, non-ASCII
COMPONENT = st.text(st.sampled_from("abcXYZ09_-é" + "x" * 3), max_size=60)
NAMES = st.lists(COMPONENT, max_size=24).map(".".join)
WORDS = st.lists(
    st.one_of(
        st.text(st.sampled_from("abcdeingsXé"), min_size=1, max_size=9),
        st.sampled_from(["the", "parse", "parses", "parsed", "a", "x" * 60, "y" * 47 + "s"]),
    ),
    max_size=30,
)


@settings(max_examples=400)
@given(NAMES, WORDS.map(" ".join), st.sampled_from([1, 7, 61, 1 << 20]))
def test_one_pass_is_the_terms_and_words_apart(name: str, summary: str, logs: int) -> None:
    assert item_index(name, summary, logs) == apart(name, summary, logs)


@pytest.mark.parametrize(
    ("name", "summary"),
    [
        ("json.dumps", "Serialize obj to a JSON formatted str."),
        ("http.server.BaseHTTPRequestHandler.send_error", "Sends and logs a complete error reply."),
        (".".join("abcdefghijklmnopqrstuvwx"), "one two three four five six seven eight nine"),
        ("os.path.os.path.os", "Parses parsed parsing parse the directories directory."),
        ("x" * 300 + ".y" * 40, "z" * 80 + " " + "z" * 81),
        ("", ""),
        ("..", "."),
        ("Name", ""),
        ("module", "no words of the stop list: a an the"),
    ],
)
def test_one_pass_on_edge_names(name: str, summary: str) -> None:
    for logs in (1, 61):
        assert item_index(name, summary, logs) == apart(name, summary, logs)

"""``Authorization: Bearer TOKEN`` read as RFC 9110 says: the scheme in any case (issue
46.7: ``bearer`` in lower case was refused by ``mcp --http``)."""

from __future__ import annotations

import pytest

from invcrawl.common.listen import bearer_token


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer s3cret", "s3cret"),
        ("bearer s3cret", "s3cret"),
        ("BEARER s3cret", "s3cret"),
        ("  Bearer   s3cret  ", "s3cret"),
        ("Basic czNjcmV0", None),
        ("Bearer", None),
        ("Bearers3cret", None),
        ("", None),
        (None, None),
    ],
)
def test_the_bearer_scheme_is_case_insensitive(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token

"""Symbol search, pure logic (no Redis): the terms an item is indexed under and a query
looks up (:mod:`invcrawl.common.search.terms`), the ranking tiers a found item is put in
(:mod:`invcrawl.common.search.ranking`), and the choice of a project and a version by name
(:mod:`invcrawl.common.search.selection`). ``frontier/search.py`` runs them against Redis;
docs/search.md describes the index and the ranking."""

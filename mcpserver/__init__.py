"""``invcrawl mcp``: the crawled symbols of every version in Redis served to coding agents
over the Model Context Protocol (the official SDK, ``mcp``). ``checks`` (pure: the bounds
of every argument, the short texts), ``bounded`` (pure: every answer within
``--max-chars``, cut at block boundaries and read on by offset), ``untrusted`` (pure: the
site's text named in each answer, imitated protocol markup neutralised), each tool's
answer read through the frontier: ``projects`` (what every answer is, the project and
version it is about, ``list_projects``), ``lookup`` (``search_symbols``, ``get_symbol``),
``history`` (``api_diff``, ``symbol_history``), ``feed`` (``changes_since``); ``server``
(the six tools on the SDK's ``MCPServer``), ``stdio`` (standard input and output, the
default), ``http`` (streamable HTTP with the dashboard's access rules), ``shedding`` (its
slow clients shed). Reads only: the ``reader`` ACL user suffices."""

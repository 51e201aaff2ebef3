"""The settings of every invcrawl process: ``commands`` (the command table), ``options``
(the option table: flags, variables, help, which commands take each), ``parsers`` (the
parser of each option's value) and ``config`` (the frozen :class:`Config` they resolve to,
once per process, and the generated docs/configuration.md)."""

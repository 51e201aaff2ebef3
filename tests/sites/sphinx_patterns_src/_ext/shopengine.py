"""An engine module documented by autodoc, whose parameters sphinx-paramlinks links."""


def create_engine(url, *, echo=False, pool_size=5):
    """Create a new engine.

    :param url: the database URL.
    :param echo: if True, the engine logs all statements.
    :param pool_size: the number of connections to keep open.
    :returns: an ``Engine``.
    """


class Engine:
    """A source of connections."""

    def connect(self, timeout=None):
        """Return a new connection.

        :param timeout: seconds to wait, or ``None`` to wait forever.
        """

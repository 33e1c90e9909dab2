"""``select.poll`` made on selectors, for a platform without poll (Windows): what a wave uses
of it (register, modify, unregister, poll), with poll's event bits. Loaded only there, and by
the test that carries a wave through it."""
import selectors

READ, WRITE = 1, 4  # poll's POLLIN and POLLOUT where it has them
_EVENTS = {READ: selectors.EVENT_READ, WRITE: selectors.EVENT_WRITE}


class Poll:
    """Answers as the object ``select.poll()`` returns. An error or a hang-up reads as both
    readable and writable, as selectors reports it."""

    def __init__(self) -> None:
        # select(), which is what DefaultSelector is there: no descriptor of its own to close
        self._selector = selectors.SelectSelector()

    def register(self, fd: int, mask: int) -> None:
        """Watch descriptor ``fd`` for ``mask`` (READ or WRITE)."""
        self._selector.register(fd, _EVENTS[mask])

    def modify(self, fd: int, mask: int) -> None:
        """Watch ``fd`` for ``mask`` instead."""
        self._selector.modify(fd, _EVENTS[mask])

    def unregister(self, fd: int) -> None:
        """Stop watching ``fd``."""
        self._selector.unregister(fd)

    def poll(self, timeout_ms: "int | None" = None) -> "list[tuple[int, int]]":
        """[(fd, mask)] ready within ``timeout_ms`` milliseconds (None: no bound)."""
        ready = self._selector.select(None if timeout_ms is None else timeout_ms / 1000)
        return [(key.fd, (READ if events & selectors.EVENT_READ else 0)
                 | (WRITE if events & selectors.EVENT_WRITE else 0)) for key, events in ready]

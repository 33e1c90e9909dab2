"""The default mongodb+srv resolver, on dnspython (loaded only when a real lookup is needed).

The SRV and the TXT lookups share one deadline (connectTimeoutMS, or what timeoutMS leaves of
it): each is given what the one before it left, and running out of it is a DNSError whose
``timeout`` is True."""
from singlemongo.clock import DEFAULT_CLOCK, Deadline
from singlemongo.errors import DNSError


class DnsPythonResolver:
    """The default resolver, on dnspython, within ``deadline`` (a Deadline, or seconds)."""

    def __init__(self, deadline=None):
        if not isinstance(deadline, Deadline):
            deadline = Deadline(DEFAULT_CLOCK, deadline, "connectTimeoutMS")
        self.deadline = deadline

    def _timed_out(self, name, rdtype):
        error = DNSError(f"DNS {rdtype} lookup of {name} timed out: {self.deadline.what} "
                         f"({self.deadline.seconds} s) was used up")
        error.timeout = True
        return error

    def _resolve(self, name, rdtype):
        import dns.exception
        import dns.resolver
        lifetime = self.deadline.remaining()
        if lifetime is not None and lifetime <= 0:
            raise self._timed_out(name, rdtype)
        try:
            return dns.resolver.resolve(name, rdtype, lifetime=lifetime)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return []
        except dns.exception.Timeout:
            raise self._timed_out(name, rdtype) from None
        except dns.exception.DNSException as exc:
            raise DNSError(f"DNS {rdtype} lookup of {name} failed: {exc}") from None

    def srv(self, name):
        # dnspython's Name.to_text without the root label, as PyMongo reads it (tests that
        # mock dnspython's answers give that method only).
        return [(r.target.to_text(omit_final_dot=True), r.port)
                for r in self._resolve(name, "SRV")]

    def txt(self, name):
        records = []
        for record in self._resolve(name, "TXT"):
            data = b"".join(record.strings)
            try:
                records.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                raise DNSError(f"the TXT record of {name} is not UTF-8 text: {data!r:.120}")\
                    from None
        return records

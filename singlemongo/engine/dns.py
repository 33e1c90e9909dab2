"""The default mongodb+srv resolver, on dnspython (loaded only when a real lookup is needed)."""
from ..errors import DNSError


class DnsPythonResolver:
    """The default resolver, on dnspython."""

    def __init__(self, timeout_s=None):
        self.timeout_s = timeout_s

    def _resolve(self, name, rdtype):
        import dns.exception
        import dns.resolver
        try:
            return dns.resolver.resolve(name, rdtype, lifetime=self.timeout_s)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return []
        except dns.exception.Timeout:
            raise DNSError(f"DNS {rdtype} lookup of {name} timed out after "
                           f"{self.timeout_s} s") from None
        except dns.exception.DNSException as exc:
            raise DNSError(f"DNS {rdtype} lookup of {name} failed: {exc}") from None

    def srv(self, name):
        return [(str(r.target), r.port) for r in self._resolve(name, "SRV")]

    def txt(self, name):
        return [b"".join(r.strings).decode("utf-8") for r in self._resolve(name, "TXT")]

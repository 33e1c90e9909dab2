"""mongodb+srv:// seed list discovery (Initial DNS Seedlist Discovery spec).

Resolution happens at the client's first operation, bounded by connectTimeoutMS, through an
injectable resolver; dnspython is imported only when a real lookup is needed.
"""
from .percent import unquote

from .client_options import with_srv_results
from .errors import DNSError


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


def _domain_labels(host):
    labels = host.lower().rstrip(".").split(".")
    return labels if len(labels) < 3 else labels[1:]


def check_srv_target(srv_host, target):
    """A target must lie inside the SRV host's domain ("Seedlist Discovery")."""
    host = srv_host.lower().rstrip(".")
    target = target.lower().rstrip(".")
    domain = ".".join(_domain_labels(host))
    if not target.endswith("." + domain) or (len(host.split(".")) < 3 and target == host):
        raise DNSError(f"SRV record target {target!r} for {srv_host} is not within the "
                       f"domain {domain!r}")
    return target


def parse_txt(record):
    pairs = []
    for item in record.split("&"):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise DNSError(f"invalid TXT record option {item!r}: expected key=value")
        pairs.append((unquote(key), unquote(value)))
    return pairs


def resolve_seedlist(options, resolver, shuffle):
    """Options with seeds from SRV and options from TXT; ``shuffle`` applies srvMaxHosts."""
    host = options.srv_host
    name = f"_{options.srv_service_name}._tcp.{host}"
    records = resolver.srv(name)
    if not records:
        raise DNSError(f"no SRV records found for {name}")
    seeds = [(check_srv_target(host, target), int(port)) for target, port in records]
    seeds = list(dict.fromkeys(seeds))
    txt = resolver.txt(host)
    if len(txt) > 1:
        raise DNSError(f"{host} has {len(txt)} TXT records; at most one is allowed")
    resolved = with_srv_results(options, seeds, parse_txt(txt[0]) if txt else [])
    limit = resolved.srv_max_hosts
    if limit and limit < len(seeds):
        shuffle(seeds)
        resolved = with_srv_results(resolved, seeds[:limit], [])
    return resolved

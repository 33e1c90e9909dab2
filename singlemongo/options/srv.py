"""mongodb+srv:// seed list discovery (Initial DNS Seedlist Discovery spec).

Pure rules on records a resolver returned: target domains, TXT options, srvMaxHosts. The
lookups themselves happen at the client's first operation through an injectable resolver
(``engine/dns.py`` on dnspython by default), bounded by connectTimeoutMS.
"""
from .uri import unquote

from .client_options import with_srv_results
from ..errors import DNSError


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

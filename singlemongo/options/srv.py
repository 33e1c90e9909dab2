"""mongodb+srv:// seed list discovery (Initial DNS Seedlist Discovery spec).

Pure rules on records a resolver returned: target domains, TXT options, srvMaxHosts. The
lookups themselves happen at the client's first operation through an injectable resolver
(``engine/dns.py`` on dnspython by default), bounded by connectTimeoutMS.
"""
from singlemongo.options.uri import unquote

from singlemongo.options.client_options import with_srv_results
from singlemongo.errors import DNSError


def _domain_labels(host):
    labels = host.lower().rstrip(".").split(".")
    return labels if len(labels) < 3 else labels[1:]


def check_srv_target(srv_host, target, validator=None):
    """A target must lie inside the SRV host's domain ("Seedlist Discovery"), or be what the
    program's ``srv_host_validator`` accepts (PyMongo 4.20's option, called with the target
    lowercased, returning a bool). The words are PyMongo's ("Invalid SRV host")."""
    host = srv_host.lower().rstrip(".")
    target = target.lower().rstrip(".")
    if validator is not None:
        try:
            allowed = validator(target)
        except Exception as exc:
            raise DNSError(f"srv_host_validator raised an exception for SRV host {target}: "
                           f"{exc}") from exc
        if not isinstance(allowed, bool):
            raise DNSError(f"srv_host_validator must return a bool for SRV host {target}, "
                           f"not {type(allowed).__name__}")
        if not allowed:
            raise DNSError(f"Invalid SRV host: {target} was rejected by srv_host_validator")
        return target
    if len(host.split(".")) < 3 and target == host:
        raise DNSError("Invalid SRV host: return address is identical to SRV hostname")
    domain = ".".join(_domain_labels(host))
    if not target.endswith("." + domain):
        raise DNSError(f"Invalid SRV host: {target} (not within the domain {domain!r} of "
                       f"{srv_host})")
    return target


def parse_txt(record):
    """The options of a TXT record (``key=value`` joined by ``&``); an empty one has none."""
    if not record:
        return []
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
    validator = options.values.get("srv_host_validator")
    seeds = [(check_srv_target(host, target, validator), int(port)) for target, port in records]
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

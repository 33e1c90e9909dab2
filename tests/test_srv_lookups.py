"""The default mongodb+srv resolver (engine/dns.py, on dnspython): the SRV and TXT lookups
share one deadline (connectTimeoutMS, or what timeoutMS leaves), a lookup that runs out of it
raises a DNS error whose ``timeout`` is True, and a TXT record that is not UTF-8 text is a
DNS error naming the record (the CLI: exit 3), never a raw UnicodeDecodeError.

dnspython's ``dns.resolver.resolve`` is replaced by a stand-in that records the lifetime it
was given and advances a fake clock by the time its answer takes."""
import subprocess
import sys

import dns.exception
import dns.resolver
import dns.name
import pytest

from singlemongo import MongoClient, errors
from singlemongo.clock import FakeClock


class _Answer:
    def __init__(self, **fields):
        self.__dict__.update(fields)


class FakeDns:
    """Answers SRV and TXT queries after ``took[rdtype]`` seconds of the fake clock; runs out
    of time as dnspython does when the lifetime is shorter."""

    def __init__(self, clock, took, txt=(b"authSource=admin",)):
        self.clock, self.took, self.txt = clock, took, txt
        self.lifetimes = {}

    def resolve(self, name, rdtype, lifetime=None):
        self.lifetimes[rdtype] = lifetime
        took = self.took.get(rdtype, 0.0)
        if lifetime is not None and took > lifetime:
            self.clock.advance(lifetime)
            raise dns.exception.Timeout()
        self.clock.advance(took)
        if rdtype == "SRV":
            return [_Answer(target=dns.name.from_text("db1.example.com."), port=27017)]
        return [_Answer(strings=[self.txt[0]])]


@pytest.fixture()
def fake_dns(monkeypatch):
    clock = FakeClock()

    def install(took, **kwargs):
        fake = FakeDns(clock, took, **kwargs)
        monkeypatch.setattr(dns.resolver, "resolve", fake.resolve)
        return fake
    install.clock = clock
    return install


def _select(clock, **options):
    client = MongoClient("mongodb+srv://cluster.example.com/", clock=clock,
                         serverSelectionTimeoutMS=100, **options)
    try:
        client.admin.command("ping")
    finally:
        client.close()


def test_srv_and_txt_share_one_deadline(fake_dns):
    """Before, each lookup got the whole deadline: 1.9 to 2.2 s against a connectTimeoutMS of
    1000 ms. The TXT lookup gets what the SRV lookup left."""
    fake = fake_dns({"SRV": 0.7, "TXT": 0.7})
    with pytest.raises(errors.PyMongoError) as raised:
        _select(fake_dns.clock, connectTimeoutMS=1000)
    assert fake.lifetimes["SRV"] == pytest.approx(1.0, abs=0.01)
    assert fake.lifetimes["TXT"] == pytest.approx(0.3, abs=0.01)
    assert raised.value.timeout is True
    assert isinstance(raised.value, errors.ConfigurationError)  # PyMongo's class for DNS


def test_timeout_ms_bounds_both_lookups_too(fake_dns):
    fake = fake_dns({"SRV": 0.3, "TXT": 0.3})
    with pytest.raises(errors.PyMongoError) as raised:
        _select(fake_dns.clock, connectTimeoutMS=10000, timeoutMS=500)
    assert fake.lifetimes["TXT"] == pytest.approx(0.2, abs=0.01)
    assert raised.value.timeout is True


def test_a_dns_timeout_says_so(fake_dns):
    fake_dns({"SRV": 5.0})
    with pytest.raises(errors.ConfigurationError, match="timed out") as raised:
        _select(fake_dns.clock, connectTimeoutMS=1000)
    assert raised.value.timeout is True


def test_a_txt_record_that_is_not_utf8_is_a_dns_error_naming_it(fake_dns):
    fake_dns({}, txt=(b"authSource=\xff\xfe",))
    with pytest.raises(errors.ConfigurationError, match="TXT record .* not UTF-8") as raised:
        _select(fake_dns.clock)
    assert not isinstance(raised.value, UnicodeError)


def test_the_cli_exits_3_for_a_txt_record_that_is_not_utf8(tmp_path):
    """docs/cli.md's table: DNS is configuration, exit 3 (it said "internal error", 1)."""
    script = tmp_path / "run.py"
    script.write_text(
        "import sys, dns.name, dns.resolver\n"
        "class A:\n"
        "    def __init__(self, **k): self.__dict__.update(k)\n"
        "def resolve(name, rdtype, lifetime=None):\n"
        "    if rdtype == 'SRV':\n"
        "        return [A(target=dns.name.from_text('db1.example.com.'), port=27017)]\n"
        "    return [A(strings=[b'authSource=\\xff'])]\n"
        "dns.resolver.resolve = resolve\n"
        "from singlemongo.cli import main\n"
        "sys.exit(main(['--uri', 'mongodb+srv://cluster.example.com/', 'ping']))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 3, done.stderr
    assert "not UTF-8" in done.stderr and "Traceback" not in done.stderr


class _Resolver:
    """An injected resolver: SRV targets as given, no TXT record."""

    def __init__(self, targets):
        self.targets = targets

    def srv(self, name):
        return [(target, 27017) for target in self.targets]

    def txt(self, name):
        return []


@pytest.mark.parametrize("validator, error", [
    (lambda host: host.endswith(".internal.example"), None),
    (lambda host: False, "Invalid SRV host: db1.internal.example was rejected by "
                         "srv_host_validator"),
    (lambda host: 1 / 0, "srv_host_validator raised an exception for SRV host"),
    (lambda host: "yes", "srv_host_validator must return a bool"),
])
def test_srv_host_validator_decides_which_targets_are_taken(validator, error):
    """PyMongo 4.20's ``srv_host_validator`` (it was refused as an unknown keyword): called
    per SRV target, lowercased, in place of the parent-domain rule; a rejection, an
    exception or a non-bool is a ConfigurationError in PyMongo's words."""
    resolver = _Resolver(["DB1.internal.example."])  # outside cluster.example.com's domain
    client = MongoClient("mongodb+srv://cluster.example.com/", resolver=resolver,
                         srv_host_validator=validator, serverSelectionTimeoutMS=50,
                         connectTimeoutMS=50)
    try:
        if error is None:
            client._connect()
            assert client._settings.seeds == (("db1.internal.example", 27017),) or \
                client._topology.options.seeds == (("db1.internal.example", 27017),)
        else:
            with pytest.raises(errors.ConfigurationError, match=error):
                client._connect()
    finally:
        client.close()


def test_srv_host_validator_needs_mongodb_srv():
    with pytest.raises(errors.ConfigurationError, match="only allowed with 'mongodb\\+srv://'"):
        MongoClient("mongodb://h/", srv_host_validator=lambda host: True)


def test_a_target_outside_the_domain_says_invalid_srv_host_as_pymongo():
    client = MongoClient("mongodb+srv://cluster.example.com/", resolver=_Resolver(["evil.org"]))
    with pytest.raises(errors.ConfigurationError, match="^Invalid SRV host: evil.org"):
        client._connect()
    client.close()


@pytest.mark.parametrize("max_hosts, connections", [(None, 6), (1, 1), (2, 2)])
def test_srv_max_hosts_bounds_a_cold_starts_connections(monkeypatch, max_hosts, connections):
    """Rule (Initial DNS Seedlist Discovery, srvMaxHosts): a cold start against a sharded
    cluster behind an SRV name checks srvMaxHosts of its mongos, not all (the serverless
    guide's figure: 6 connections, 1 with srvMaxHosts=1)."""
    import socket

    from singlemongo.testing import Sharded
    from singlemongo.testing.dns import FakeResolver
    real = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: real(
        "127.0.0.1" if str(host).endswith(".example.com") else host, *a, **k))
    with Sharded(6) as cluster:
        records = [(f"m{i}.cluster.example.com", int(s.address_text.rsplit(":", 1)[1]))
                   for i, s in enumerate(cluster.servers)]
        resolver = FakeResolver(srv={"_mongodb._tcp.cluster.example.com": records}, txt={})
        query = f"&srvMaxHosts={max_hosts}" if max_hosts else ""
        with MongoClient("mongodb+srv://cluster.example.com/?tls=false" + query,
                         resolver=resolver) as client:
            assert client.shop.products.find_one({}) is None
        assert cluster.total_connections() == connections

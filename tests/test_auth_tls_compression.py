"""SCRAM authentication, TLS and compression against the simulated deployment."""
import pytest

from singlemongo import errors
from singlemongo.auth import AuthenticationFailed
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.testing import ReplicaSet, Standalone

from .conftest import server_context as _server_context
from .util import eventually

USERS = {"alice": "s3cret-pw", "old": ("legacy-pw", ["SCRAM-SHA-1"])}


def _uri(dep, user, password, extra=""):
    hosts = ",".join(s.address_text for s in dep.servers)
    return f"mongodb://{user}:{password}@{hosts}/?replicaSet=rs{extra}"


@pytest.fixture(scope="module")
def rs():
    with ReplicaSet(3, users=USERS) as deployment:
        yield deployment


def test_authenticated_one_off_find_one_authenticates_only_the_server_used(rs):
    before = rs.users.completed
    clock = FakeClock()
    client = MongoClient(_uri(rs, "alice", "s3cret-pw"), clock=clock)
    client.test.c.find_one()
    assert client._topology.connections_opened == 3
    assert rs.users.completed == before + 1
    used = [s for s in rs.servers if s.commands["find"]]
    # Speculative authentication: the used server saw no saslStart, one saslContinue.
    assert used[0].commands["saslStart"] == 0 and used[0].commands["saslContinue"] >= 1
    client.test.c.find_one()
    clock.advance(61)
    client.test.c.find_one()  # a rescan's checks never authenticate again
    assert rs.users.completed == before + 1
    client.close()


def test_fresh_process_find_one_opens_3_connections_and_authenticates_once(rs):
    import subprocess
    import sys
    """Rule: a one-off opens one connection per member, authenticates only the one it uses,
    and ends its session at exit (the client is alive then: a client dropped before exit
    sends nothing, no I/O in a finalizer). Before, the last check passed on sessions an
    earlier test had ended."""
    connections = [s.connections for s in rs.servers]
    before = rs.users.completed
    ended = len(rs.sessions_ended)
    code = ("import sys; from singlemongo.client import MongoClient; "
            "client = MongoClient(sys.argv[1]); print(client.test.c.find_one({'none': 1}))")
    out = subprocess.run([sys.executable, "-c", code, _uri(rs, "alice", "s3cret-pw")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "None"
    assert [s.connections - c for s, c in zip(rs.servers, connections)] == [1, 1, 1]
    assert rs.users.completed == before + 1
    assert eventually(lambda: len(rs.sessions_ended) > ended)  # endSessions at exit


def test_checks_alone_never_authenticate(rs):
    before = rs.users.completed
    client = MongoClient(_uri(rs, "alice", "s3cret-pw"), clock=FakeClock())
    client._topology.open()
    client._topology.scan()
    assert rs.users.completed == before
    client.close()


def test_wrong_password_is_a_clear_error_without_the_password(rs):
    client = MongoClient(_uri(rs, "alice", "not-the-pw"), clock=FakeClock())
    with pytest.raises(AuthenticationFailed) as info:
        client.test.c.find_one()
    text = str(info.value) + repr(info.value) + repr(info.value.details)
    assert "alice" in text and "authSource" in text
    assert "not-the-pw" not in text
    client.close()


def test_mechanism_negotiation_falls_back_to_sha1(rs):
    client = MongoClient(_uri(rs, "old", "legacy-pw"), clock=FakeClock())
    client.test.c.find_one()
    handshake = [c for s in rs.servers for c in s.command_log if "saslSupportedMechs" in c]
    assert handshake and handshake[-1]["saslSupportedMechs"] == "admin.old"
    starts = [c for s in rs.servers for c in s.command_log if "saslStart" in c]
    assert starts[-1]["mechanism"] == "SCRAM-SHA-1"
    client.close()


def test_explicit_mechanism(rs):
    client = MongoClient(_uri(rs, "alice", "s3cret-pw", "&authMechanism=SCRAM-SHA-1"),
                         clock=FakeClock())
    assert client.test.c.find_one() is None
    client.close()


def test_unauthenticated_client_gets_unauthorized(rs):
    hosts = ",".join(s.address_text for s in rs.servers)
    client = MongoClient(f"mongodb://{hosts}/?replicaSet=rs", clock=FakeClock())
    with pytest.raises(errors.OperationFailure) as info:
        client.test.c.find_one()
    assert info.value.code == 13
    client.close()


def test_zlib_compression_is_negotiated_and_used():
    with Standalone() as s:
        client = MongoClient(s.uri, compressors="zlib", clock=FakeClock())
        client.test.c.insert_one({"x": "y" * 1000})
        assert client.test.c.find_one()["x"] == "y" * 1000
        assert s.servers[0].compressed_requests == 2  # the hello is never compressed
        handshake = s.servers[0].command_log[0]
        assert handshake["compression"] == ["zlib"]


def test_tls_verifies_against_the_ca(certs):
    with Standalone(tls_context=_server_context(certs)) as s:
        uri = f"mongodb://{s.servers[0].address_text}/?tls=true&tlsCAFile={certs / 'ca.pem'}"
        client = MongoClient(uri, clock=FakeClock())
        assert client.admin.command("ping")["ok"] == 1
        client.close()


def test_open_socket_without_a_context_makes_one_for_its_options(certs):
    """Rule: open_socket's TLS path works when its caller passes no context (it makes one
    for the options): a socket to a TLS server is wrapped and verified against the CA. It
    raised NameError (tls_context was never imported) once the socket code left wire/."""
    from singlemongo.engine.dial import open_socket
    from singlemongo.options.client_options import client_options
    with Standalone(tls_context=_server_context(certs)) as s:
        options = client_options(f"mongodb://{s.servers[0].address_text}/?tls=true"
                                 f"&tlsCAFile={certs / 'ca.pem'}")
        sock = open_socket(s.servers[0].address, options, timeout=5)
        try:
            assert sock.version() is not None  # the TLS handshake was done
        finally:
            sock.close()


def test_tls_rejects_an_unknown_ca_by_default(certs):
    with Standalone(tls_context=_server_context(certs)) as s:
        client = MongoClient(f"mongodb://{s.servers[0].address_text}/?tls=true",
                             clock=FakeClock())
        with pytest.raises(errors.ServerSelectionError, match="(?i)certificate"):
            client.admin.command("ping")


@pytest.mark.parametrize("fault", [dict(code=18), dict(code=91), dict(action="close")],
                         ids=["AuthenticationFailed", "ShutdownInProgress", "network error"])
def test_an_authentication_error_marks_the_server_unknown_and_clears_it(rs, fault):
    """SDAM "MongoDB Handshake errors": an error while authenticating an application
    connection marks the server Unknown and clears its connection; the next operation
    rediscovers it and authenticates on a new connection. (Before: only network errors did
    anything, and an AuthenticationFailed reply left a server that had refused us selectable.)
    Writes are not retried here: a retryable write's retry would authenticate at once."""
    client = MongoClient(_uri(rs, "alice", "s3cret-pw", "&retryWrites=false"),
                         clock=FakeClock())
    primary = rs.servers[0]
    primary.fail("saslContinue", **fault)
    with pytest.raises((errors.OperationFailure, errors.ConnectionFailure)):
        client.test.c.insert_one({"x": 1})
    sd = client.topology_description.servers[primary.address]
    assert sd.server_type.value == "Unknown" and "authentication failed" in sd.error
    assert primary.address not in client._topology._connections
    assert client._topology.stale
    client.test.c.insert_one({"x": 2})  # rediscovered, authenticated on a new connection
    client.close()


def test_authentication_is_bounded_by_connect_timeout(rs):
    """Authentication is part of opening a connection: each step has connectTimeoutMS (before,
    a server that never answered saslContinue blocked the client forever)."""
    client = MongoClient(_uri(rs, "alice", "s3cret-pw", "&connectTimeoutMS=200"
                              "&retryWrites=false"), clock=FakeClock())
    rs.servers[0].fail("saslContinue", action="hang")
    with pytest.raises(errors.NetworkTimeout):
        client.test.c.insert_one({"x": 1})
    rs.servers[0].clear_faults()
    client.close()


def _crl(certs, tmp_path, revoke):
    """A CRL signed by the test CA (``openssl ca``), revoking the server certificate or
    nothing."""
    import shutil
    import subprocess
    for name in ("ca.pem", "ca.key", "server.pem"):
        shutil.copy(certs / name, tmp_path / name)
    (tmp_path / "index.txt").write_text("")
    (tmp_path / "crlnumber").write_text("01\n")
    (tmp_path / "ca.cnf").write_text(
        "[ca]\ndefault_ca = test\n[test]\ndatabase = index.txt\ncrlnumber = crlnumber\n"
        "default_md = sha256\ndefault_crl_days = 2\n")
    run = lambda *a: subprocess.run(["openssl", "ca", "-config", "ca.cnf", "-keyfile", "ca.key",
                                     "-cert", "ca.pem", *a], cwd=tmp_path, check=True,
                                    capture_output=True)
    if revoke:
        run("-revoke", "server.pem")
    run("-gencrl", "-out", "ca.crl")
    return tmp_path / "ca.crl"


@pytest.mark.parametrize("revoked", [False, True], ids=["clean CRL", "server revoked"])
def test_tls_crl_file_revokes_certificates_as_in_pymongo(certs, tmp_path, revoked):
    """Rule (PyMongo's tlsCRLFile: the CRL is loaded and the server's certificate checked
    against it): a revoked server certificate fails the handshake, naming the revocation;
    one the CRL does not list connects. Before, tlsCRLFile was an unknown option."""
    crl = _crl(certs, tmp_path, revoked)
    with Standalone(tls_context=_server_context(certs)) as s:
        uri = (f"mongodb://{s.servers[0].address_text}/?tls=true&tlsCAFile={certs / 'ca.pem'}"
               f"&serverSelectionTimeoutMS=200")
        client = MongoClient(uri, tlsCRLFile=str(crl), clock=FakeClock())
        if revoked:
            with pytest.raises(errors.ServerSelectionError, match="revoked"):
                client.admin.command("ping")
        else:
            assert client.admin.command("ping")["ok"] == 1
        client.close()


def test_tls_crl_file_that_cannot_be_read_is_named(tmp_path):
    """Rule (bad input gets a clear error naming the value): a tlsCRLFile that does not
    exist or is no CRL is a ConfigurationError naming the file, at the first operation (no
    I/O in the constructor)."""
    missing = tmp_path / "missing.crl"
    client = MongoClient(f"mongodb://127.0.0.1:1/?tls=true&tlsCRLFile={missing}",
                         clock=FakeClock())
    with pytest.raises(errors.ConfigurationError, match="tlsCRLFile.*missing.crl"):
        client.admin.command("ping")

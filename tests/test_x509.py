"""MONGODB-X509 authentication (auth spec) against a simulated replica set that verifies
client certificates with a test CA generated at test time (tests/conftest.py ``certs``)."""
import pytest

from singlemongo import MongoClient
from singlemongo.errors import OperationFailure
from singlemongo.testing import ReplicaSet

from .conftest import CLIENT_KEY_PASSWORD, CLIENT_SUBJECT, server_context
from .util import one_off_cost


@pytest.fixture(scope="module")
def x509_rs(certs):
    with ReplicaSet(3, tls_context=server_context(certs, verify_clients=True),
                    x509_users={CLIENT_SUBJECT}) as rs:
        yield rs


@pytest.fixture
def deployment(x509_rs):
    return x509_rs.reset()


def uri(rs, certs, key_file="client.pem", x509=True, user="", extra=""):
    hosts = ",".join(s.address_text for s in rs.servers)
    query = f"tls=true&tlsCAFile={certs / 'ca.pem'}&tlsCertificateKeyFile={certs / key_file}"
    if x509:
        query += "&authMechanism=MONGODB-X509"
    return f"mongodb://{user}{hosts}/?{query}{extra}"


@pytest.fixture(scope="module")
def open_rs(certs):
    """The same replica set, same TLS, without authentication."""
    with ReplicaSet(3, tls_context=server_context(certs, verify_clients=True)) as rs:
        yield rs


def test_a_one_off_x509_query_costs_what_an_unauthenticated_one_does(deployment, open_rs,
                                                                       certs):
    """Speculative authentication: the handshake's hello carries the whole X.509 exchange,
    so an authenticated one-off find_one on a 3-member replica set opens the same
    connections and sends the same number of commands as one without authentication on the
    same replica set without it; the user name comes from the certificate's subject."""
    plain_doc, plain_cost = one_off_cost(open_rs, uri(open_rs, certs, x509=False))
    doc, cost = one_off_cost(deployment, uri(deployment, certs))
    assert plain_doc == doc == {"_id": 1}
    assert cost == plain_cost
    assert sum(s.commands.get("authenticate", 0) for s in deployment.servers) == 0
    assert sum(c for c, _ in cost) == 3  # one socket per member


def test_the_username_may_be_given_and_must_match(deployment, certs):
    """The URI's user must be the certificate's subject (RFC 2253); another name fails with
    an error that names the user and says what to check, never a traceback from deep inside."""
    quoted = CLIENT_SUBJECT.replace("=", "%3D").replace(",", "%2C")
    client = MongoClient(uri(deployment, certs, user=quoted + "@"))
    client.app.c.insert_one({"_id": 2})
    client.close()
    wrong = MongoClient(uri(deployment, certs, user="CN%3Dsomeone-else@"))
    with pytest.raises(OperationFailure) as failure:
        wrong.app.c.find_one({})
    assert "CN=someone-else" in str(failure.value)
    assert "tlsCertificateKeyFile" in str(failure.value)
    wrong.close()


def test_an_encrypted_key_file_with_its_password(deployment, certs):
    """tlsCertificateKeyFilePassword decrypts the key; the password never shows in the
    client's repr."""
    client = MongoClient(uri(deployment, certs, key_file="client-encrypted.pem",
                             extra=f"&tlsCertificateKeyFilePassword={CLIENT_KEY_PASSWORD}"))
    assert client.app.c.count_documents({}) == 0
    assert CLIENT_KEY_PASSWORD not in repr(client)
    client.close()


def test_without_a_certificate_the_server_refuses(deployment, certs):
    """No client certificate: the server has no verified subject, the driver reports the
    authentication failure with the mechanism and the hint."""
    hosts = ",".join(s.address_text for s in deployment.servers)
    client = MongoClient(f"mongodb://{hosts}/?tls=true&tlsCAFile={certs / 'ca.pem'}"
                         f"&authMechanism=MONGODB-X509")
    with pytest.raises(OperationFailure, match="MONGODB-X509"):
        client.app.c.find_one({})
    client.close()


# ----- broken TLS files: typed errors naming the file, never a prompt (issue 19) -------------

def _config_error(client):
    from singlemongo.errors import ConfigurationError
    with pytest.raises(ConfigurationError) as info:
        client.app.c.count_documents({})
    client.close()
    return str(info.value)


def test_a_wrong_key_password_names_the_file(deployment, certs):
    """A wrong tlsCertificateKeyFilePassword is a ConfigurationError naming the file (and
    never the password). Before, a raw ssl.SSLError escaped (the CLI called it an internal
    error)."""
    text = _config_error(MongoClient(uri(deployment, certs, key_file="client-encrypted.pem",
                                         extra="&tlsCertificateKeyFilePassword=wrong-one")))
    assert "client-encrypted.pem" in text and "password" in text and "wrong-one" not in text


def test_an_encrypted_key_without_a_password_never_prompts(deployment, certs):
    """An encrypted key and no tlsCertificateKeyFilePassword: a ConfigurationError at once,
    never OpenSSL's prompt on the terminal (which waited for a person, forever under a
    CGI script). Before, OpenSSL prompted."""
    import subprocess
    import sys
    script = ("from singlemongo import MongoClient\n"
              "from singlemongo.errors import ConfigurationError\n"
              f"c = MongoClient({uri(deployment, certs, key_file='client-encrypted.pem')!r})\n"
              "try:\n    c.app.c.count_documents({})\n"
              "except ConfigurationError as e:\n    print('CONFIG', e)\n")
    done = subprocess.run([sys.executable, "-c", script], input="guess\n", text=True,
                          capture_output=True, timeout=60)
    assert done.stdout.startswith("CONFIG") and "client-encrypted.pem" in done.stdout
    assert "encrypted" in done.stdout and "pass phrase" not in done.stderr.lower()


def test_a_certificate_file_without_its_key_names_the_file(deployment, certs):
    """A tlsCertificateKeyFile holding only the certificate: a ConfigurationError saying the
    key is missing. Before, a raw ssl.SSLError."""
    text = _config_error(MongoClient(uri(deployment, certs, key_file="client.crt")))
    assert "client.crt" in text and "private key" in text


def test_a_missing_ca_file_names_the_file(deployment, certs):
    """A tlsCAFile that does not exist: a ConfigurationError naming it. Before, an OSError
    without the file's name."""
    client = MongoClient(uri(deployment, certs).replace("ca.pem", "no-such-ca.pem"))
    assert "no-such-ca.pem" in _config_error(client)


def test_a_missing_ca_or_key_file_is_a_file_not_found_error_as_in_pymongo(deployment, certs):
    """Issue 45: PyMongo raises FileNotFoundError for a missing tlsCAFile or
    tlsCertificateKeyFile, so ``except FileNotFoundError``/``except OSError`` written for it
    must catch ours (before: a ConfigurationError only). It is still a ConfigurationError,
    naming the file, raised at the first operation (no I/O in constructors)."""
    from singlemongo.errors import ConfigurationError
    for option, name in (("ca.pem", "no-such-ca.pem"), ("client.pem", "no-such-key.pem")):
        client = MongoClient(uri(deployment, certs).replace(option, name),
                             serverSelectionTimeoutMS=2000)
        with pytest.raises(FileNotFoundError) as info:
            client.admin.command("ping")
        assert isinstance(info.value, ConfigurationError) and isinstance(info.value, OSError)
        assert info.value.filename.endswith(name) and name in str(info.value)
        client.close()


def _other_ca(tmp_path):
    import subprocess
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    "other.key", "-out", "other-ca.pem", "-days", "2", "-subj",
                    "/CN=another CA"], cwd=tmp_path, check=True, capture_output=True)
    return tmp_path / "other-ca.pem"


def test_tls_ca_file_is_the_only_ca_trusted(certs, tmp_path, monkeypatch):
    """Issue 47 (security): with tlsCAFile the user trusts that CA alone, as PyMongo loads
    it alone. Before, the system's store was loaded beside it, so a certificate any publicly
    trusted CA signed was accepted for the host. Here the system store (SSL_CERT_FILE, which
    OpenSSL's default paths read) trusts the server's CA and tlsCAFile names another CA: the
    server must be refused."""
    from singlemongo.errors import ServerSelectionTimeoutError
    from singlemongo.testing import Standalone
    monkeypatch.setenv("SSL_CERT_FILE", str(certs / "ca.pem"))
    with Standalone(tls_context=server_context(certs)) as s:
        address = s.servers[0].address_text
        trusted_by_system = MongoClient(f"mongodb://{address}/?tls=true",
                                        serverSelectionTimeoutMS=2000)
        assert trusted_by_system.admin.command("ping")["ok"] == 1  # the store really trusts it
        trusted_by_system.close()
        client = MongoClient(f"mongodb://{address}/?tls=true&tlsCAFile={_other_ca(tmp_path)}",
                             serverSelectionTimeoutMS=1000)
        with pytest.raises(ServerSelectionTimeoutError, match="(?i)certificate"):
            client.admin.command("ping")
        client.close()


def test_no_ca_is_loaded_when_certificates_are_not_verified(certs):
    """Issue 47: loading the system's CA store costs about 19 ms of a one-off; with
    certificate verification off (tlsInsecure, tlsAllowInvalidCertificates) nothing is
    loaded, and with tlsCAFile that file alone."""
    from singlemongo.options.client_options import client_options
    from singlemongo.engine.tls import tls_context
    for query in ("tlsInsecure=true", "tlsAllowInvalidCertificates=true",
                  f"tlsInsecure=true&tlsCAFile={certs / 'ca.pem'}"):
        ctx = tls_context(client_options(f"mongodb://h/?tls=true&{query}"))
        assert ctx.cert_store_stats()["x509_ca"] == 0, query
    ctx = tls_context(client_options(f"mongodb://h/?tls=true&tlsCAFile={certs / 'ca.pem'}"))
    assert ctx.cert_store_stats()["x509_ca"] == 1


def test_an_x509_one_off_loads_no_hashlib_or_hmac(deployment, certs):
    """Issue 47 (``ssl``, ``hashlib`` and ``hmac`` loaded only on the paths that use them):
    an X.509 one-off loaded the SCRAM module, and hashlib and hmac with it, because the
    authentication package imported it whatever the mechanism."""
    from .test_import_budget import _probe
    deployment.store.seed("t", "c", [{"_id": 1}])
    _, _, added, _ = _probe(uri(deployment, certs))
    assert "ssl" in added
    assert not {"hashlib", "hmac", "singlemongo.auth.scram"} & set(added)


def test_a_tls_context_is_built_once_per_process_until_its_files_change(certs, tmp_path):
    """Issue 47 (TLS context and CA loading once per process): clients with the same TLS
    options share one SSLContext; a changed CA file (a rotation) gets a new one."""
    import shutil

    from singlemongo.options.client_options import client_options
    from singlemongo.engine.tls import tls_context
    ca = tmp_path / "ca.pem"
    shutil.copy(certs / "ca.pem", ca)
    query = f"tls=true&tlsCAFile={ca}&tlsCertificateKeyFile={certs / 'client.pem'}"
    first = tls_context(client_options(f"mongodb://h1/?{query}"))
    assert tls_context(client_options(f"mongodb://h2/?{query}")) is first
    assert tls_context(client_options(f"mongodb://h1/?{query}&tlsInsecure=true")) is not first
    ca.write_bytes(ca.read_bytes() + b"\n")
    assert tls_context(client_options(f"mongodb://h1/?{query}")) is not first

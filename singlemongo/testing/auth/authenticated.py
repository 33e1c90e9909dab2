"""A replica set that requires authentication and knows a user of every mechanism the
simulator verifies, for tests of code that must work whatever the deployment's mechanism
(the pytest plugin's ``mongo_authenticated`` fixture)::

    def test_report(mongo_authenticated):
        for mechanism in mongo_authenticated.mechanisms:
            client = MongoClient(mongo_authenticated.uri_for(mechanism),
                                 **mongo_authenticated.options_for(mechanism))
            ...

``uri_for("MONGODB-AWS")`` puts the test access key in the connection string; a test of
the environment or endpoint sources uses ``aws_keys`` with ``testing.aws.AwsEndpoints``.
GSSAPI's client side is the Kerberos stand-in: authenticate inside ``with rs.kerberos:``.
MONGODB-X509 needs a TLS deployment with client certificates, which this one is not.
"""
from urllib.parse import quote_plus

from singlemongo.testing.auth.aws import Aws, AwsKeys
from singlemongo.testing.deployments import ReplicaSet
from singlemongo.testing.auth.gssapi import KerberosStandIn
from singlemongo.testing.auth.oidc import Oidc, OidcIssuer
from singlemongo.testing.auth.sasl import Plain

USERS = {"SCRAM-SHA-256": ("scram-user", "scram-Pw-1"), "SCRAM-SHA-1": ("scram-user", "scram-Pw-1"),
         "PLAIN": ("plain-user", "plain-Pw-1"),
         "MONGODB-AWS": ("AKIDSIMULATED", "simulated-Secret-Key-1"),
         "GSSAPI": ("gssapi-user@SIMULATED.TEST", "gssapi-Pw-1")}


class AuthenticatedReplicaSet(ReplicaSet):
    """A 3-member replica set with one user per mechanism (``USERS``)."""

    def __init__(self, n=3, **options):
        self.aws_keys = AwsKeys({USERS["MONGODB-AWS"][0]: USERS["MONGODB-AWS"][1]})
        self.oidc_issuer = OidcIssuer()
        # GSSAPI: the client's side is this stand-in too; use ``with rs.kerberos:``.
        self.kerberos = KerberosStandIn(dict([USERS["GSSAPI"]]),
                                        {f"mongodb@{options.get('host', '127.0.0.1')}"})
        super().__init__(n, users={USERS["SCRAM-SHA-256"][0]: USERS["SCRAM-SHA-256"][1]},
                         mechanisms=[Plain(dict([USERS["PLAIN"]])), Aws(self.aws_keys),
                                     Oidc(self.oidc_issuer), self.kerberos.mechanism()],
                         **options)

    @property
    def mechanisms(self):
        return (*USERS, "MONGODB-OIDC")

    def options_for(self, mechanism):
        """The MongoClient keywords ``mechanism`` needs beyond ``uri_for`` (MONGODB-OIDC: a
        callback that gives this deployment's issuer's tokens)."""
        if mechanism != "MONGODB-OIDC":
            return {}
        from singlemongo.auth_oidc import OIDCCallback, OIDCCallbackResult
        issuer = self.oidc_issuer

        class Callback(OIDCCallback):
            def fetch(self, context):
                return OIDCCallbackResult(access_token=issuer.token("oidc-user"))
        return {"authMechanismProperties": {"OIDC_CALLBACK": Callback()}}

    def uri_for(self, mechanism):
        """A connection string that authenticates with ``mechanism`` (with ``options_for``)."""
        hosts = ",".join(s.address_text for s in self.servers if s.role != "hidden")
        query = f"?replicaSet={self.name}&authMechanism={mechanism}"
        if mechanism not in USERS:
            return f"mongodb://{hosts}/{query}"
        user, password = USERS[mechanism]
        return f"mongodb://{quote_plus(user)}:{quote_plus(password)}@{hosts}/{query}"

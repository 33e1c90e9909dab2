"""The deployments unified tests run against, and which of them a test's runOnRequirements
accept. Each test runs once, on the first accepted topology in PREFERENCE."""
from singlemongo.testing.deployments import SERVER_VERSION

from .skips import OTHER_TOPOLOGY, REQUIREMENTS, Skip

PREFERENCE = ("replicaset", "sharded", "single", "load-balanced")
FIXTURES = {"single": "mongo_standalone_session", "replicaset": "mongo_replica_set_session",
            "sharded": "mongo_sharded_session", "load-balanced": "mongo_load_balanced_session"}
SCHEMA_MAJOR = 1


def version(text):
    parts = [int(p) for p in text.split("-")[0].split(".")[:3]]
    return tuple(parts + [0] * (3 - len(parts)))


USERS = {"bob": "pwd123"}  # the authenticated variants' user
OIDC = "MONGODB-OIDC"  # the authenticated variant whose clients log in with a token callback
SCRAM = ("SCRAM-SHA-1", "SCRAM-SHA-256")


def unmet(requirement, topology, auth=False):
    """Why ``requirement`` rejects ``topology`` (``auth``: False, True for SCRAM, or
    "MONGODB-OIDC"), or None."""
    if "minServerVersion" in requirement and SERVER_VERSION < version(requirement["minServerVersion"]):
        return f"server version >= {requirement['minServerVersion']}"
    if "maxServerVersion" in requirement and SERVER_VERSION > version(requirement["maxServerVersion"]):
        return f"server version <= {requirement['maxServerVersion']}"
    topologies = requirement.get("topologies")
    if topologies is not None:
        accepted = {"sharded-replicaset": "sharded"}
        if topology not in {accepted.get(t, t) for t in topologies}:
            return f"topology in {topologies}"
    if requirement.get("serverless") == "require":
        return "Atlas Serverless"
    if requirement.get("auth") is not None and requirement["auth"] != bool(auth):
        return "authentication " + ("enabled" if requirement["auth"] else "disabled")
    mechanism = (requirement.get("authMechanism") or "").upper()
    if mechanism:
        supported = {OIDC} if auth == OIDC else set(SCRAM) if auth else set()
        if mechanism not in supported:
            return f"authMechanism {requirement['authMechanism']}"
    elif auth == OIDC:
        return "a deployment without MONGODB-OIDC"
    if requirement.get("csfle"):
        return "client-side field level encryption"
    if requirement.get("serverParameters"):
        return f"server parameters {requirement['serverParameters']}"
    return None


def choose_topology(file_doc, test, only=None):
    """(topology, authenticated?) to run ``test`` on (``only`` that one, if given); Skip if
    no simulated deployment meets its requirements."""
    reasons = []
    for topology in (PREFERENCE if only is None else (only,)):
        for auth in (False, True, OIDC):
            why = None
            for requirements in (file_doc.get("runOnRequirements"), test.get("runOnRequirements")):
                if requirements:
                    found = [unmet(r, topology, auth) for r in requirements]
                    if all(found):
                        why = found[0]
                        break
            if why is None:
                return topology, auth
            reasons.append(why)
    if only is not None and all(r.startswith("topology in") for r in reasons):
        raise Skip(f"{OTHER_TOPOLOGY}: {reasons[0]}")
    raise Skip(f"{REQUIREMENTS} (needs {sorted(set(reasons))[0]}; the simulated deployment is "
               f"MongoDB {'.'.join(map(str, SERVER_VERSION[:2]))})")


class Environment:
    """Deployments (session-scoped fixtures of the singlemongo pytest plugin, and
    authenticated variants from tests/conftest.py), started lazily."""

    def __init__(self, request, auth=False):
        self.request = request
        self.auth = auth

    def deployment(self, topology):
        if self.auth == OIDC:
            return self.request.getfixturevalue("oidc_deployments")(topology)
        if self.auth:
            return self.request.getfixturevalue("authenticated_deployments")(topology, USERS)
        return self.request.getfixturevalue(FIXTURES[topology])

    def uri_for(self, topology, client_spec):
        deployment = self.deployment(topology)
        uri = deployment.uri
        if topology == "sharded" and client_spec.get("useMultipleMongoses") is False:
            uri = f"mongodb://{deployment.servers[0].address_text}/"
        if self.auth == OIDC:
            uri += ("&" if "?" in uri else "?") + f"authMechanism={OIDC}"
        elif self.auth:
            user, password = next(iter(USERS.items()))
            uri = uri.replace("mongodb://", f"mongodb://{user}:{password}@", 1)
        return uri

    def oidc_properties(self, topology):
        """authMechanismProperties for a client of the OIDC variant (what a test's
        ``{"$$placeholder": 1}`` stands for): a callback giving the deployment's tokens."""
        from singlemongo.auth_oidc import OIDCCallback, OIDCCallbackResult
        issuer = self.deployment(topology).oidc_issuer

        class Callback(OIDCCallback):
            def fetch(self, context):
                return OIDCCallbackResult(access_token=issuer.token("test-user"))
        return {"OIDC_CALLBACK": Callback()}

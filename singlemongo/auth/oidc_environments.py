"""MONGODB-OIDC's built-in environments (auth spec, "Built-in OIDC Environment
Integrations"), each a machine callback that caches nothing (the driver caches), and the
human flow's ``ALLOWED_HOSTS`` check.

- ``test``: the token in the file ``OIDC_TOKEN_FILE`` names;
- ``azure``: the Instance Metadata Service's token for ``TOKEN_RESOURCE`` (and the username
  as ``client_id``);
- ``gcp``: the VM metadata server's identity token with ``TOKEN_RESOURCE`` as audience;
- ``k8s``: the service account token file (``AZURE_FEDERATED_TOKEN_FILE``, else
  ``AWS_WEB_IDENTITY_TOKEN_FILE``, else Kubernetes' default path).

``ENDPOINTS`` are the real metadata addresses; ``singlemongo.testing.oidc`` points them at
its loopback stand-ins for tests only.
"""
import json
import os

from singlemongo.errors import ConfigurationError

ENDPOINTS = {"azure": "http://169.254.169.254", "gcp": "http://metadata"}
K8S_DEFAULT_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"


def _result(token):
    from singlemongo.auth_oidc import OIDCCallbackResult
    return OIDCCallbackResult(access_token=token)


def _read(path, what):
    try:
        with open(path, encoding="utf-8") as stream:
            return stream.read().strip()
    except OSError as exc:
        raise ConfigurationError(f"MONGODB-OIDC ({what}): cannot read the token file "
                                 f"{path!r}: {exc.strerror}") from None


class _Environment:
    """A built-in environment as an OIDCCallback (duck-typed: ``fetch(context)``)."""

    def __init__(self, name, credentials):
        self.name, self.credentials = name, credentials

    def fetch(self, context):
        return _result(getattr(self, f"_{self.name}")(context))

    def _test(self, context):
        path = os.environ.get("OIDC_TOKEN_FILE")
        if not path:
            raise ConfigurationError("MONGODB-OIDC with ENVIRONMENT test needs OIDC_TOKEN_FILE")
        return _read(path, "test")

    def _k8s(self, context):
        path = (os.environ.get("AZURE_FEDERATED_TOKEN_FILE")
                or os.environ.get("AWS_WEB_IDENTITY_TOKEN_FILE") or K8S_DEFAULT_TOKEN_FILE)
        return _read(path, "k8s")

    def _metadata(self, context, url, headers, parse):
        from singlemongo.clock import DEFAULT_CLOCK, Deadline
        from singlemongo.auth.http import request
        deadline = Deadline(DEFAULT_CLOCK, context.timeout_seconds or 10.0, "the metadata")
        status, text = request("GET", url, deadline, headers)
        if status != 200:
            raise ConfigurationError(f"MONGODB-OIDC ({self.name}): the metadata endpoint "
                                     f"answered HTTP {status}: {text.reveal()[:200]}")
        return parse(text.reveal())

    def _azure(self, context):
        import urllib.parse
        query = {"api-version": "2018-02-01",
                 "resource": self.credentials.mechanism_properties["TOKEN_RESOURCE"]}
        if self.credentials.username:
            query["client_id"] = self.credentials.username
        url = (f"{ENDPOINTS['azure']}/metadata/identity/oauth2/token?"
               f"{urllib.parse.urlencode(query)}")
        return self._metadata(context, url, {"Accept": "application/json", "Metadata": "true"},
                              lambda text: json.loads(text)["access_token"])

    def _gcp(self, context):
        import urllib.parse
        audience = urllib.parse.quote(self.credentials.mechanism_properties["TOKEN_RESOURCE"],
                                      safe="")
        url = (f"{ENDPOINTS['gcp']}/computeMetadata/v1/instance/service-accounts/default/"
               f"identity?audience={audience}")
        return self._metadata(context, url, {"Metadata-Flavor": "Google"}, str.strip)


def machine_callback(credentials):
    """The OIDC_CALLBACK given, or the ENVIRONMENT's built-in one."""
    props = credentials.mechanism_properties
    if "OIDC_CALLBACK" in props:
        return props["OIDC_CALLBACK"]
    return _Environment(props["ENVIRONMENT"], credentials)


def _matches(host, pattern):
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


def check_allowed_host(host, credentials):
    """"ALLOWED_HOSTS": the human callback is never called for a host outside the list
    (wildcards "*.example.com" match nested subdomains)."""
    from singlemongo.auth.oidc import DEFAULT_ALLOWED_HOSTS
    allowed = credentials.mechanism_properties.get("ALLOWED_HOSTS", DEFAULT_ALLOWED_HOSTS)
    if not any(_matches(host.lower(), pattern.lower()) for pattern in allowed):
        raise ConfigurationError(
            f"MONGODB-OIDC: refusing to call OIDC_HUMAN_CALLBACK for host {host!r}, which "
            f"is not in ALLOWED_HOSTS ({', '.join(allowed)}); add it to "
            f"authMechanismProperties ALLOWED_HOSTS if it is yours")

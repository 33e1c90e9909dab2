"""Keep credentials out of every message, repr and log line."""
import re

_USERINFO = re.compile(r"^(mongodb(?:\+srv)?://)([^@/?]*)@", re.IGNORECASE)
_SECRET_OPTIONS = re.compile(
    r"((?:^|[?&;])(?:proxyPassword|tlsCertificateKeyFilePassword|password)=)[^&;]*",
    re.IGNORECASE)
SECRET_OPTION_NAMES = frozenset(
    {"proxypassword", "tlscertificatekeyfilepassword", "authmechanismproperties"})
REDACTED = "<redacted>"


def redact_uri(uri):
    """The connection string with its password and secret options replaced."""
    if not isinstance(uri, str):
        return repr(type(uri))

    def userinfo(match):
        user = match.group(2).partition(":")[0]
        return f"{match.group(1)}{user}:{REDACTED}@" if ":" in match.group(2) else match.group(0)

    return _SECRET_OPTIONS.sub(lambda m: m.group(1) + REDACTED, _USERINFO.sub(userinfo, uri))


def redact_value(name, value):
    """An option value fit for a message: secrets are replaced."""
    return REDACTED if name.lower() in SECRET_OPTION_NAMES else value

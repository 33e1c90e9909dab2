"""MONGODB-X509 on a simulated server: the connection's client certificate, verified by the
server's TLS context against its CA, names the user (its subject in RFC 2253 form)."""

RDN_NAMES = {"commonName": "CN", "organizationalUnitName": "OU", "organizationName": "O",
             "localityName": "L", "stateOrProvinceName": "ST", "countryName": "C",
             "domainComponent": "DC", "emailAddress": "emailAddress"}


def rfc2253(certificate):
    """A certificate's subject as MongoDB names an X.509 user ("CN=client,OU=...,O=...")."""
    if not certificate or not certificate.get("subject"):
        return None
    return ",".join(f"{RDN_NAMES.get(name, name)}={value}"
                    for rdn in reversed(certificate["subject"]) for name, value in rdn)


def _failure(code, name, message):
    return {"ok": 0, "code": code, "codeName": name, "errmsg": message}


def authenticate_x509(users, cmd, state):
    """The ``authenticate`` command (or the handshake's speculative one) for ``users``, the
    subjects that are users of $external; marks the connection authenticated."""
    subject = rfc2253(state.get("peer_certificate"))
    if cmd.get("mechanism") != "MONGODB-X509":
        return _failure(2, "BadValue", f"Unsupported mechanism {cmd.get('mechanism')!r}")
    if subject is None:
        return _failure(18, "AuthenticationFailed",
                        "No verified subject name available from client")
    if cmd.get("user") not in (None, subject):
        return _failure(18, "AuthenticationFailed",
                        "There is no x.509 client certificate matching the user.")
    if subject not in users:
        return _failure(11, "UserNotFound",
                        f"Could not find user \"{subject}\" for db \"$external\"")
    state["authenticated"] = True
    return {"ok": 1, "dbname": "$external", "user": subject}

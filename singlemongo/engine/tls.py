"""TLS for connections: the SSLContext built from the client's TLS options, once per process
for the same options and unchanged files. Loaded only by a client with TLS: a plain one-off
never reads this module (nor ``ssl``).
"""
import os

from singlemongo.errors import ConfigurationError


# SSLContexts already built in this process, by what they were built from: a second client
# with the same TLS options (or a client made again in a long process) loads no CA again.
_TLS_CONTEXTS: dict = {}


def _tls_key(options):
    """What a context depends on: the options, and each file's identity and modification, so
    that a rotated certificate or CA file is loaded again."""
    def stamp(path):
        try:
            st = os.stat(path)
        except (OSError, TypeError, ValueError):
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns
    files = (options.tls_ca_file, options.tls_crl_file, options.tls_certificate_key_file)
    if not options.tls_ca_file:  # the system's store: where OpenSSL's variables point
        files += (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    return (options.tls_insecure, options.tls_allow_invalid_certificates,
            options.tls_allow_invalid_hostnames, options.tls_certificate_key_file_password,
            files, tuple(stamp(path) for path in files if path))


def tls_context(options):
    """The SSLContext for these options, built once per process (issue 47: loading CAs costs
    milliseconds): a later client with the same options, and files unchanged, shares it."""
    key = _tls_key(options)
    ctx = _TLS_CONTEXTS.get(key)
    if ctx is None:
        ctx = _TLS_CONTEXTS[key] = _new_tls_context(options)
    return ctx


def _new_tls_context(options):
    """A new SSLContext for these options. With tlsCAFile only that file's CAs are trusted (as PyMongo: not the system's store as
    well); with certificates unverified no CA is loaded at all. A missing file is a
    ConfigurationFileNotFoundError (a FileNotFoundError too, as PyMongo raises), another
    file that cannot be used a ConfigurationError naming it; OpenSSL never prompts for a
    key's password (a program without a terminal would wait for ever)."""
    # Only TLS users pay for importing ssl (its enums are thousands of objects: imported as
    # the driver's own modules are, with the collector paused).
    from singlemongo import _import_paused
    ssl = _import_paused("ssl", absolute=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # hostname checked, certificate required
    insecure = options.tls_insecure
    verify = not (insecure or options.tls_allow_invalid_certificates)
    if verify and options.tls_ca_file:
        _load_verify_locations(ctx, "tlsCAFile", options.tls_ca_file)
    elif verify:
        ctx.load_default_certs()
    if options.tls_crl_file:  # PyMongo's tlsCRLFile: the server's certificate is checked
        _load_verify_locations(ctx, "tlsCRLFile", options.tls_crl_file)
        ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    if insecure or options.tls_allow_invalid_hostnames:
        ctx.check_hostname = False
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if options.tls_certificate_key_file:
        _load_certificate_key_file(ctx, options)
    return ctx


def _missing_file(name, path):
    from singlemongo.errors import ConfigurationFileNotFoundError
    return ConfigurationFileNotFoundError(f"{name} {path!r} does not exist", path)


def _load_verify_locations(ctx, name, path):
    """A PEM file of CA certificates or CRLs into ``ctx``; ConfigurationError naming it."""
    import ssl
    try:
        ctx.load_verify_locations(cafile=path)
    except FileNotFoundError:
        raise _missing_file(name, path) from None
    except (OSError, ssl.SSLError) as exc:
        raise ConfigurationError(f"{name} {path!r} cannot be used: "
                                 f"{getattr(exc, 'strerror', None) or exc}") from None


def _load_certificate_key_file(ctx, options):
    """tlsCertificateKeyFile (and its password) into ``ctx``. The password is asked for by a
    callable, so an encrypted key without one fails instead of prompting."""
    import ssl
    path = options.tls_certificate_key_file
    try:
        ctx.load_cert_chain(path, password=lambda: options.tls_certificate_key_file_password
                            or b"")
    except FileNotFoundError:
        raise _missing_file("tlsCertificateKeyFile", path) from None
    except (OSError, ssl.SSLError, ValueError) as exc:
        reason = _key_file_problem(path, options.tls_certificate_key_file_password is not None)
        raise ConfigurationError(f"tlsCertificateKeyFile {path!r} cannot be used: "
                                 f"{reason or getattr(exc, 'strerror', None) or exc}") from None


def _key_file_problem(path, has_password):
    """What is wrong with a certificate-and-key file, from its PEM headers (None: unknown)."""
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20)
    except OSError as exc:
        return exc.strerror or str(exc)
    if b"PRIVATE KEY-----" not in text:
        return "it holds no private key (it must hold the certificate and its key, in PEM)"
    if b"CERTIFICATE-----" not in text:
        return "it holds no certificate (it must hold the certificate and its key, in PEM)"
    if b"ENCRYPTED" in text and not has_password:
        return ("its private key is encrypted and no tlsCertificateKeyFilePassword was given "
                "(it is never asked for on the terminal)")
    if b"ENCRYPTED" in text:
        return "tlsCertificateKeyFilePassword does not decrypt its private key (wrong password?)"
    return "the certificate and the private key do not match, or it is not PEM"

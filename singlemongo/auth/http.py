"""One bounded HTTP request for the credential sources of MONGODB-AWS and MONGODB-OIDC's
built-in environments (``http.client``, loaded only by them)."""
from singlemongo.options.uri import SecretText


def request(method, url, deadline, headers=None, body=None):
    """(status, text) of one HTTP request, bounded by ``deadline`` (and 10 s). The text is a
    SecretText: an answer with credentials in it never shows in a traceback's locals."""
    import http.client
    import urllib.parse
    parts = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    left = deadline.remaining()
    timeout = max(0.001, min(10.0, left if left is not None else 10.0))
    conn = kind(parts.hostname, parts.port, timeout=timeout)
    try:
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request(method, target, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, SecretText(response.read(1_000_000).decode("utf-8", "replace"))
    finally:
        conn.close()

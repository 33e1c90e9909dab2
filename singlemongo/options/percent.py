"""Percent-decoding for connection strings, without importing urllib.parse (milliseconds)."""
import re

# Patterns are compiled on first use (re's cache), not at import: a one-off query
# compiles only those it needs.
_ESCAPE = r"(?:%[0-9A-Fa-f]{2})+"


def unquote(text):
    """Decode %XX escapes as UTF-8, like urllib.parse.unquote."""
    if "%" not in text:
        return text
    return re.sub(_ESCAPE, lambda m: bytes.fromhex(m.group(0).replace("%", "")).decode(
        "utf-8", "replace"), text)

"""Percent-decoding for connection strings, without importing urllib.parse (milliseconds)."""
import re

_ESCAPE = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def unquote(text):
    """Decode %XX escapes as UTF-8, like urllib.parse.unquote."""
    if "%" not in text:
        return text
    return _ESCAPE.sub(lambda m: bytes.fromhex(m.group(0).replace("%", "")).decode(
        "utf-8", "replace"), text)

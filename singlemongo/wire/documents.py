"""Checks on documents before anything is sent: type, size and keys."""
from collections.abc import Mapping

import bson

from singlemongo import errors

MAX_BSON_SIZE = 16 * 1024 * 1024


def check_document(doc, what="document", max_size=MAX_BSON_SIZE, replacement=False):
    """Raise InvalidDocument naming the problem; return the encoded size."""
    if not isinstance(doc, Mapping):
        raise errors.InvalidDocument(f"{what} must be a mapping (dict), not {type(doc).__name__}")
    for key in doc:
        if not isinstance(key, str):
            raise errors.InvalidDocument(f"{what} has a non-string key {key!r}; keys must be str")
        if replacement and key.startswith("$"):
            raise errors.InvalidDocument(
                f"{what} has the top-level key {key!r}: keys starting with "
                f"'$' are operators, not field names")
    try:
        size = len(bson.encode(doc))
    except Exception as exc:  # bson raises InvalidDocument, TypeError, OverflowError...
        raise errors.InvalidDocument(f"{what} cannot be encoded as BSON: {exc}") from None
    if size > max_size:
        raise errors.InvalidDocument(
            f"{what} is {size} bytes, over the server's maxBsonObjectSize "
            f"of {max_size} bytes")
    return size


def check_update(update, what="update"):
    if not isinstance(update, Mapping) or not update:
        raise errors.InvalidDocument(f"{what} must be a non-empty mapping of update operators")
    if isinstance(update, Mapping) and not all(str(k).startswith("$") for k in update):
        raise errors.InvalidDocument(
            f"{what} must contain only update operators ($set, $inc, ...); "
            f"use replace_one to replace a document")

"""Structured logging through stdlib ``logging`` under the spec's components (logging spec).

Each message is logged with the spec's unstructured text, and the spec's fields in
``record.mongodb`` (a dict). Documents are relaxed Extended JSON truncated to
MONGODB_LOG_MAX_DOCUMENT_LENGTH (default 1000) characters.
"""
import logging
import os

from bson import json_util
from bson.json_util import RELAXED_JSON_OPTIONS

COMMAND = logging.getLogger("singlemongo.command")
SERVER_SELECTION = logging.getLogger("singlemongo.serverSelection")
TOPOLOGY = logging.getLogger("singlemongo.topology")
CONNECTION = logging.getLogger("singlemongo.connection")
DEFAULT_MAX_DOCUMENT_LENGTH = 1000


def max_document_length():
    try:
        return int(os.environ.get("MONGODB_LOG_MAX_DOCUMENT_LENGTH", DEFAULT_MAX_DOCUMENT_LENGTH))
    except ValueError:
        return DEFAULT_MAX_DOCUMENT_LENGTH


def document(doc):
    text = json_util.dumps(doc, json_options=RELAXED_JSON_OPTIONS)
    limit = max_document_length()
    return text if len(text) <= limit else text[:limit] + "..."


def enabled(logger, level=logging.DEBUG):
    return logger.isEnabledFor(level)


def emit(logger, level, text, **fields):
    if logger.isEnabledFor(level):
        logger.log(level, text, extra={"mongodb": fields})

"""Structured logging through stdlib ``logging`` under the spec's components (logging spec).

Each message is logged with the spec's unstructured text, and the spec's fields in
``record.mongodb`` (a dict). Documents are relaxed Extended JSON truncated to
MONGODB_LOG_MAX_DOCUMENT_LENGTH (default 1000) characters. ``logging`` is never imported by
singlemongo itself: if the application has not imported it, nothing can be configured to
receive these messages, so a one-off script does not pay for loading it.
"""
import os
import sys

from singlemongo.monitoring import (COMMAND, CONNECTION, DEBUG, INFO, LOGGER_NAMES, SERVER_SELECTION,  # noqa: F401
               TOPOLOGY, WARNING, logging_enabled as enabled)

DEFAULT_MAX_DOCUMENT_LENGTH = 1000


def max_document_length():
    """The logging spec's MONGODB_LOG_MAX_DOCUMENT_LENGTH; PyMongo's spelling of it,
    MONGOB_LOG_MAX_DOCUMENT_LENGTH, is read too (programs written for PyMongo set that)."""
    value = os.environ.get("MONGODB_LOG_MAX_DOCUMENT_LENGTH",
                           os.environ.get("MONGOB_LOG_MAX_DOCUMENT_LENGTH"))
    try:
        return int(value) if value is not None else DEFAULT_MAX_DOCUMENT_LENGTH
    except ValueError:
        return DEFAULT_MAX_DOCUMENT_LENGTH


def document(doc):
    # Characters as they are, not \u escapes: a cut at the limit falls between two code
    # points (the logging spec's "Truncation"), never inside an escape.
    from bson import json_util
    text = json_util.dumps(doc, json_options=json_util.RELAXED_JSON_OPTIONS, ensure_ascii=False)
    limit = max_document_length()
    return text if len(text) <= limit else text[:limit] + "..."


class PyMongoMessage:
    """A record's message as PyMongo writes it under its logger names: the spec's fields as
    one Extended JSON document, "message" first, then the client's topology id ("clientId",
    "topologyId" for the topology component). Made into text only when a handler formats
    it."""

    __slots__ = ("fields",)

    def __init__(self, fields):
        self.fields = fields

    def __str__(self):
        from bson import json_util
        return json_util.dumps(self.fields)


def emit(component, level, text, topology_id=None, **fields):
    """Log ``text`` with the spec's ``fields`` in ``record.mongodb``; ``record.mongodb_topology_id``
    tells which client's topology the message is about. Under PyMongo's logger names
    (install_as_pymongo()) the message is PyMongo's JSON document, which programs parse."""
    logging = sys.modules.get("logging")
    if logging is not None:
        name = LOGGER_NAMES.get(component, component)
        logger = logging.getLogger(name)
        if logger.isEnabledFor(level):
            message = text
            if name.startswith("pymongo."):
                key = "topologyId" if component == TOPOLOGY else "clientId"
                message = PyMongoMessage({"message": fields.get("message"), key: topology_id,
                                          **{k: v for k, v in fields.items() if k != "message"}})
            logger.log(level, message, extra={"mongodb": fields,
                                              "mongodb_topology_id": topology_id})

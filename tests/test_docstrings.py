"""Every public class, function, method and property of the face has a docstring (issue 13,
"Typed and documented"): what it does, in a line, and what it raises where it raises."""
import importlib
import inspect

import pytest

FACE = ("client", "client_cache", "database", "collection", "collection_writes",
        "find_and_modify", "cursor", "command_cursor", "bulk", "results", "errors",
        "operations", "read_preferences", "write_concern", "read_concern", "collation",
        "server_api", "monitoring.listeners", "options.client_options", "client_session",
        "transaction", "with_transaction", "collection_reads", "collection_queries",
        "collection_indexes", "client_commands", "database_commands", "cursor_modifiers",
        "gridfs.bucket", "gridfs.grid_in", "gridfs.grid_out", "gridfs.errors", "uri_parser",
        "options_view", "csot", "driver_info", "drop_in", "drop_in.common",
        "drop_in.unsupported", "drop_in.event_loggers", "drop_in.pymongo", "change_stream")


def public_members(module):
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj):
            yield name, obj
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if isinstance(member, property) or inspect.isfunction(member) or isinstance(
                        member, (classmethod, staticmethod)):
                    yield f"{name}.{attr}", member
        elif inspect.isfunction(obj):
            yield name, obj


def undocumented(module):
    missing = []
    for name, obj in public_members(module):
        target = obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj
        if not (inspect.getdoc(target) or "").strip():
            missing.append(name)
    return missing


@pytest.mark.parametrize("name", FACE)
def test_public_api_is_documented(name):
    module = importlib.import_module(f"singlemongo.{name}")
    assert undocumented(module) == []

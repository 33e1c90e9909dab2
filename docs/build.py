"""Build the API reference from the docstrings (``make docs``): pdoc over the modules a user
imports, into ``docs/api/``. Names loaded on first use (PEP 562) are loaded first, so the
reference lists them. Warnings are errors: ``tests/test_docs.py`` builds it too."""
import importlib
import pathlib
import sys
import warnings

MODULES = ["singlemongo", "singlemongo.client", "singlemongo.database", "singlemongo.collection",
           "singlemongo.collection_reads",
           "singlemongo.collection_writes", "singlemongo.collection_indexes", "singlemongo.find_and_modify", "singlemongo.cursor",
           "singlemongo.command_cursor", "singlemongo.client_session",
           "singlemongo.errors", "singlemongo.results", "singlemongo.operations",
           "singlemongo.read_preferences", "singlemongo.write_concern",
           "singlemongo.read_concern", "singlemongo.collation", "singlemongo.server_api",
           "singlemongo.monitoring", "singlemongo.gridfs", "singlemongo.uri_parser",
           "singlemongo.driver_info", "singlemongo.options_view", "singlemongo.csot",
           "singlemongo.change_stream", "singlemongo.client_cache", "singlemongo.testing",
           "singlemongo.drop_in"]
# Submodules pdoc documents with their package, whose PEP 562 names must be loaded too.
SUBMODULES = ["singlemongo.drop_in.pymongo"]


def build(output):
    """Write the reference to ``output``; raise if pdoc warns about anything."""
    import pdoc
    import pdoc.render
    for name in MODULES + SUBMODULES:
        module = importlib.import_module(name)
        for attribute in getattr(module, "__all__", ()):
            getattr(module, attribute)  # PEP 562 names become real attributes
    pdoc.render.configure(docformat="restructuredtext", footer_text="singlemongo")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        pdoc.pdoc(*MODULES, output_directory=pathlib.Path(output))
    problems = [str(w.message) for w in seen]
    if problems:
        raise SystemExit("pdoc warned:\n" + "\n".join(problems))


if __name__ == "__main__":
    build(sys.argv[1] if len(sys.argv) > 1 else str(pathlib.Path(__file__).parent / "api"))

"""The names of Python's and PyMongo's documentation the site links to, as intersphinx
inventories written at build time (no network during a build: see ``conf.py``).

Each row is (name, role, page#anchor) on the project's published site; ``$`` in the anchor
stands for the name, as in Sphinx's own inventories. A name a guide links that is not here
is an unresolved reference, which the build (warnings as errors) refuses.
"""
import pathlib
import zlib

PYTHON = ("https://docs.python.org/3", [
    ("datetime.datetime", "py:class", "library/datetime.html#$"),
    ("fnmatch", "py:module", "library/fnmatch.html#module-$"),
    ("logging", "py:module", "library/logging.html#module-$"),
    ("logging.Logger", "py:class", "library/logging.html#$"),
    ("os.fork", "py:function", "library/os.html#$"),
    ("signal", "py:module", "library/signal.html#module-$"),
    ("ssl.SSLContext", "py:class", "library/ssl.html#$"),
    ("threading.Thread", "py:class", "library/threading.html#$"),
    ("gc.freeze", "py:function", "library/gc.html#$"),
    ("io.IOBase", "py:class", "library/io.html#$"),
])
PYMONGO = ("https://pymongo.readthedocs.io/en/stable", [
    ("pymongo.mongo_client.MongoClient", "py:class", "api/pymongo/mongo_client.html#$"),
    ("pymongo.collection.Collection", "py:class", "api/pymongo/collection.html#$"),
    ("pymongo.timeout", "py:function", "api/pymongo/index.html#$"),
    ("pymongo.errors.PyMongoError", "py:exception", "api/pymongo/errors.html#$"),
    ("pymongo.errors.AutoReconnect", "py:exception", "api/pymongo/errors.html#$"),
    ("pymongo.monitoring", "py:module", "api/pymongo/monitoring.html#module-$"),
    ("bson.codec_options.CodecOptions", "py:class", "api/bson/codec_options.html#$"),
    ("bson.objectid.ObjectId", "py:class", "api/bson/objectid.html#$"),
    ("gridfs.GridFSBucket", "py:class", "api/gridfs/index.html#$"),
])


def inventory(project, rows):
    """The bytes of a version-2 Sphinx inventory listing ``rows``."""
    head = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: \n"
            "# The remainder of this file is compressed using zlib.\n").encode()
    lines = "".join(f"{name} {role} 1 {uri} -\n" for name, role, uri in rows)
    return head + zlib.compress(lines.encode())


def mapping(directory):
    """Write the inventories into ``directory``; the ``intersphinx_mapping`` naming them."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    result = {}
    for key, (base, rows) in {"python": PYTHON, "pymongo": PYMONGO}.items():
        path = directory / f"{key}.inv"
        path.write_bytes(inventory(key, rows))
        result[key] = (base, str(path))
    return result

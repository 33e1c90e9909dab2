"""PyMongo's own synchronous test suite, run against a simulated replica set with PyMongo (the
control) and with singlemongo through ``install_as_pymongo()`` (``make pymongo-suite``)."""

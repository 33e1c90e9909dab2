"""The FerretDB tier (``make test-ferretdb``): the driver, PyMongo as the control and the
simulator measured against FerretDB v1.24, a server nobody here wrote."""

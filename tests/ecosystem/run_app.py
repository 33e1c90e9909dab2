"""Run one ecosystem program with the driver named: ``python -m tests.ecosystem.run_app
DRIVER MODULE URI``. ``singlemongo`` installs itself as pymongo first
(``install_as_pymongo()``); ``pymongo`` is PyMongo itself, the control."""
import importlib
import json
import sys


def main(driver, module, uri):
    if driver == "singlemongo":
        import singlemongo
        singlemongo.install_as_pymongo()
    app = importlib.import_module(f"tests.ecosystem.apps.{module}")
    result = app.main(uri)
    import pymongo
    print(json.dumps({"driver": pymongo.MongoClient.__module__, "result": result},
                     default=str))


if __name__ == "__main__":
    main(*sys.argv[1:])

"""mongodb-migrations as its README runs it: two migration files applied, the run repeated
(nothing left to do), then rolled back to the first. Its configuration's defaults (an empty
username and password beside a URL and a database) reach ``MongoClient(url, username="",
password="")``. Run by the ecosystem tests with PyMongo and with singlemongo
(``install_as_pymongo()``). Before, singlemongo refused ``username=""``, which PyMongo
takes as no credentials."""
import contextlib
import io
import tempfile

from mongodb_migrations.cli import MigrationManager
from mongodb_migrations.config import Configuration, Execution
from pymongo import MongoClient

STEPS = {
    "20240101000000": "self.db.users.insert_many([{'n': i} for i in range(3)])",
    "20240201000000": "self.db.users.update_many({}, {'$set': {'v': 2}}); "
                      "self.db.users.create_index('n', unique=True)",
}
MIGRATION = """from mongodb_migrations.base import BaseMigration


class Migration(BaseMigration):
    def upgrade(self):
        {body}

    def downgrade(self):
        self.db.users.update_many({{}}, {{'$unset': {{'v': 1}}}})
"""


def main(uri):
    path = tempfile.mkdtemp()
    for stamp, body in STEPS.items():
        with open(f"{path}/{stamp}_step.py", "w") as out:
            out.write(MIGRATION.format(body=body))
    client = MongoClient(uri)
    client.drop_database("migrations")
    config = dict(mongo_url=uri, mongo_database="migrations", mongo_username="",
                  mongo_password="", mongo_migrations_path=path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        MigrationManager(Configuration(dict(config))).run()
        MigrationManager(Configuration(dict(config))).run()
        MigrationManager(Configuration(dict(config, execution=Execution.DOWNGRADE,
                                            to_datetime="20240101000000"))).run()
    db = client.migrations
    return {"printed": printed.getvalue().splitlines(),
            "users": list(db.users.find({}, {"_id": 0}).sort("n")),
            "applied": [m["migration_datetime"] for m in
                        db.database_migrations.find().sort("migration_datetime")],
            "indexes": sorted(db.users.index_information())}

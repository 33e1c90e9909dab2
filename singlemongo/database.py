"""Database: the generic command, collections, and the catalog."""
from .collection import Collection, _as_read_preference
from .cursor import Cursor
from .errors import InvalidOperation
from .engine.operation import Request, execute
from .selection.read_preference import PRIMARY
from .selection.selector import READ, Criteria


class Database:
    def __init__(self, client, name, read_preference=None):
        if not isinstance(name, str) or not name or any(c in name for c in '/\\. "$\x00'):
            raise InvalidOperation(f"invalid database name {name!r}")
        self.client = client
        self.name = name
        self._read_preference = _as_read_preference(read_preference)

    def __repr__(self):
        return f"Database({self.name!r})"

    def __getitem__(self, name):
        return Collection(self, name)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return Collection(self, name)

    def get_collection(self, name, read_preference=None):
        return Collection(self, name, read_preference)

    @property
    def read_preference(self):
        return self._read_preference or self.client.read_preference

    def command(self, command, value=1, read_preference=None, **kwargs):
        """The generic command. Server selection spec, "Use of read preferences with commands":
        it is a read, with primary read preference unless one is given (so a direct connection
        to a secondary sends primaryPreferred)."""
        cmd = {command: value} if isinstance(command, str) else dict(command)
        cmd.update(kwargs)
        rp = _as_read_preference(read_preference) or PRIMARY
        return execute(self.client._topology, Request(
            self.name, cmd, Criteria(READ, rp), is_read=True)).reply

    def list_collection_names(self):
        cursor = Cursor(_Catalog(self),
                        {"listCollections": 1, "nameOnly": True}, Criteria(READ, PRIMARY), retry="read")
        return [doc["name"] for doc in cursor]

    def drop_collection(self, name):
        Collection(self, name).drop()


class _Catalog:
    """What a Cursor needs from a collection, for database-level cursors."""

    def __init__(self, database):
        self.database = database
        self.full_name = f"{database.name}.$cmd.listCollections"

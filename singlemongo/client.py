"""MongoClient: the face. Constructing one does no I/O; the first operation scans."""
from .client_options import client_options
from .clock import DEFAULT_CLOCK
from .operation import run_command
from .selection.read_preference import ReadPreference
from .selection.selector import READ, WRITE, Criteria
from .topology import Topology


class MongoClient:
    def __init__(self, uri="mongodb://localhost", *, clock=None, resolver=None,
                 event_listeners=(), **options):
        self.options = client_options(uri, **options)
        self._topology = Topology(self.options, clock or DEFAULT_CLOCK, event_listeners, resolver)

    def __repr__(self):
        return f"MongoClient({self.options!r})"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getitem__(self, name):
        return Database(self, name)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return Database(self, name)

    @property
    def topology_description(self):
        """The current topology description, read without any I/O."""
        return self._topology.description

    @property
    def read_preference(self):
        return self.options.read_preference

    def close(self):
        self._topology.close()


class Database:
    def __init__(self, client, name):
        self.client = client
        self.name = name

    def __repr__(self):
        return f"Database({self.name!r})"

    def command(self, command, value=1, read_preference=None, **kwargs):
        """The generic command: sent to the primary unless a read preference is given."""
        cmd = {command: value} if isinstance(command, str) else dict(command)
        cmd.update(kwargs)
        if read_preference is None:
            criteria = Criteria(WRITE)
        else:
            rp = read_preference if isinstance(read_preference, ReadPreference) else \
                ReadPreference(read_preference)
            criteria = Criteria(READ, rp)
        return run_command(self.client._topology, self.name, cmd, criteria,
                           is_read=criteria.operation == READ)

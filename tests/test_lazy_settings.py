"""Settings a one-off never reads are built when read (issue 20): the face's write concern,
read concern and read preference classes load at first use, and what each level inherits is
unchanged. Also: the import pauses the cyclic garbage collector and restores it."""
import subprocess
import sys

import pytest

from singlemongo import MongoClient
from singlemongo.errors import ConfigurationError
from singlemongo.monitoring import CommandListener
from singlemongo.read_concern import ReadConcern
from singlemongo.testing import Standalone
from singlemongo.write_concern import WriteConcern


def _run(code, *args):
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=True).stdout.split()


def test_default_concerns_are_built_when_first_read():
    """Rule: a client with default concerns loads write_concern.py and read_concern.py only
    when a program reads them (before: at import, for every one-off)."""
    code = ("import sys\nfrom singlemongo import MongoClient\n"
            "c = MongoClient('mongodb://h:1').db.coll\n"
            "print('singlemongo.write_concern' in sys.modules, "
            "'singlemongo.read_concern' in sys.modules, "
            "'singlemongo.read_preferences' in sys.modules)\n"
            "print(repr(c.write_concern).replace(' ', ''), repr(c.read_concern), "
            "c.read_preference.mode)")
    assert _run(code) == ["False", "False", "False", "WriteConcern()", "ReadConcern()", "0"]


def test_each_level_inherits_or_overrides_the_concerns():
    """Rule: a database and a collection inherit the client's concerns unless given their own
    (PyMongo's BaseObject), at any depth, including sub-collections."""
    client = MongoClient("mongodb://h:1/?w=2&journal=true&readConcernLevel=majority")
    coll = client.db.coll
    assert coll.write_concern.document == {"w": 2, "j": True}
    assert coll.read_concern == ReadConcern("majority")
    assert coll.sub.read_concern == ReadConcern("majority")
    db = client.get_database("db", write_concern=WriteConcern(w=1))
    assert db.coll.write_concern.document == {"w": 1}
    assert db.coll.with_options(read_concern=ReadConcern("local")).read_concern.level == "local"
    assert client.db.with_options(write_concern=WriteConcern(w=0)).coll.sub.write_concern \
        == WriteConcern(w=0)


@pytest.mark.parametrize("keyword", ["write_concern", "read_concern"])
def test_a_concern_of_the_wrong_type_is_refused(keyword):
    """Rule: a concern that is not the face's class is a TypeError naming the value, also
    when the class's module was never loaded."""
    with pytest.raises(TypeError, match=r"\{'w': 1\}"):
        MongoClient("mongodb://h:1").get_database("db", **{keyword: {"w": 1}})


def test_an_invalid_client_write_concern_fails_at_construction():
    """Rule: a write concern set by the client's options is built (and checked) when the
    client is made, not at the first write."""
    with pytest.raises(ConfigurationError, match="j to True"):
        MongoClient("mongodb://h:1/?w=0&journal=true")


class _Finds(CommandListener):
    def __init__(self):
        self.commands = []

    def started(self, event):
        if event.command_name == "find":
            self.commands.append(event.command)

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


@pytest.mark.parametrize("query,expected", [("", None), ("/?readConcernLevel=majority",
                                                         {"level": "majority"})])
def test_a_read_sends_the_read_concern_it_inherits(query, expected):
    """Rule: find sends the inherited readConcern, and none for the server's default."""
    listener = _Finds()
    with Standalone() as sa:
        with MongoClient(sa.uri + query, event_listeners=[listener]) as client:
            client.db.coll.find_one()
    assert listener.commands[0].get("readConcern") == expected


@pytest.mark.parametrize("disable", [False, True])
def test_the_import_pauses_the_garbage_collector_and_restores_it(disable):
    """Rule: no collection of the older generations runs while the driver imports (before:
    a generation-1 pass over the heap, and later a full one: over 1 ms of every one-off);
    the young generation is collected once the import is done. The collector is left as the
    program had it."""
    code = ("import gc, sys\n"
            f"{'gc.disable()' if disable else ''}\n"
            "runs = []\n"
            "gc.callbacks.append(lambda phase, info: runs.append(info['generation']) "
            "if phase == 'start' else None)\n"
            "from singlemongo import MongoClient\n"
            "client = MongoClient('mongodb://h:1')  # the engine is imported here\n"
            "print(max(runs, default=0), gc.isenabled())")
    assert _run(code) == ["0", str(not disable)]


def test_the_import_leaves_its_objects_in_the_oldest_generation():
    """Rule: what the import made lives as long as the process, so it goes where objects that
    survive two collections go (the oldest generation): the first query's collection does
    not traverse it again (7 M instructions of a one-off). Nothing is left frozen."""
    code = ("import gc\n"
            "from singlemongo import MongoClient\n"
            "client = MongoClient('mongodb://h:1')  # the engine is imported here\n"
            "print(any(o is MongoClient for o in gc.get_objects(2)), gc.get_freeze_count())")
    assert _run(code) == ["True", "0"]


def test_a_programs_frozen_objects_stay_frozen():
    """Rule: a program that froze its objects (a pre-fork server sharing pages with its
    workers) keeps them frozen: the import does not move generations then."""
    code = ("import gc\n"
            "kept = [[] for _ in range(100)]\n"
            "gc.freeze()\n"
            "from singlemongo import MongoClient\n"
            "client = MongoClient('mongodb://h:1')\n"
            "print(any(o is kept for o in gc.get_objects()))  # not the frozen generation's")
    assert _run(code) == ["False"]


def test_a_client_made_again_leaves_the_programs_young_objects_young():
    """Rule: only an import moves objects to the oldest generation; a process that makes a
    client per request (a WSGI worker) keeps its young garbage where the next young
    collection finds it (before: every client moved it to the oldest generation)."""
    code = ("import gc\n"
            "gc.set_threshold(1_000_000)  # no collection of its own during the test\n"
            "from singlemongo import MongoClient\n"
            "MongoClient('mongodb://h:1')  # the engine is imported here\n"
            "marker = [[] for _ in range(3)]\n"
            "MongoClient('mongodb://h:1')\n"
            "print(any(o is marker for o in gc.get_objects(2)))")
    assert _run(code) == ["False"]

"""A resolver serving fixed SRV and TXT records, for mongodb+srv tests without DNS."""
import json


class FakeResolver:
    def __init__(self, srv=None, txt=None, fail=None):
        self._srv = {k.lower().rstrip("."): list(v) for k, v in (srv or {}).items()}
        self._txt = {k.lower().rstrip("."): list(v) for k, v in (txt or {}).items()}
        self._fail = fail
        self.queries = []

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return cls({k: [tuple(r) for r in v] for k, v in data["srv"].items()}, data["txt"])

    def _lookup(self, table, kind, name):
        self.queries.append((kind, name))
        if self._fail is not None:
            raise self._fail
        return list(table.get(name.lower().rstrip("."), ()))

    def srv(self, name):
        return self._lookup(self._srv, "SRV", name)

    def txt(self, name):
        return self._lookup(self._txt, "TXT", name)

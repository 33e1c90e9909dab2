"""Collations in the simulated server: strings compared by a locale's rules rather than by
their bytes, in filters, sorts, ``distinct`` and the statements of updates and deletes.

A server compares with ICU's tables, which are not available here; this approximates the
root collation from Unicode data, which is what the common locales (``en``, ``fr``, ``de``,
...) agree on for Latin text:

- primary level: base letters without accents or case ("a" = "A" = "á"); spaces and
  punctuation before digits, digits before letters (ICU's group order);
- secondary level (strength >= 2): accents ("a" < "á"), compared backwards when
  ``backwards`` is set (French);
- tertiary level (strength >= 3, the default): case, lowercase first unless ``caseFirst`` is
  ``upper``; ``caseLevel`` adds case after the primary level at strength 1 and 2;
- strength 5 (identical): the code points break any remaining tie;
- ``numericOrdering``: digit runs compare as numbers ("2" < "10");
- ``alternate: shifted``: spaces and punctuation (``maxVariable: punct``) or spaces alone
  (``maxVariable: space``) are ignored at levels 1 to 3.

Locale-specific tailorings (Swedish "ä" after "z", Spanish "ñ", ...) are not applied; the
simulator reference (docs/simulator.md) says so. ``locale: "simple"`` is binary comparison, as on a server.
"""
import contextlib
import dataclasses
import threading
import unicodedata

from singlemongo.testing.query.codes import CommandError

# Collation Document: the fields a server accepts, each checked by type.
FIELDS = {"locale": str, "caseLevel": bool, "caseFirst": str, "strength": int,
          "numericOrdering": bool, "alternate": str, "maxVariable": str,
          "normalization": bool, "backwards": bool, "version": str}
CASE_FIRST = ("upper", "lower", "off")
# ICU's group order at the primary level.
SPACE, PUNCT, DIGIT, LETTER, OTHER = range(5)

# The collation of the command running, per thread: a store's lock serializes its commands,
# but two deployments in one process run theirs at once, each on its server's thread.
_running = threading.local()


@dataclasses.dataclass(frozen=True)
class Collation:
    """One collation document, parsed (``parse``); ``key(text)`` orders as the server does."""
    locale: str
    strength: int = 3
    case_level: bool = False
    case_first: str = "off"
    numeric: bool = False
    shifted: bool = False
    max_variable: str = "punct"
    backwards: bool = False

    def document(self):
        """The collation as a server reports it (listIndexes, listCollections)."""
        return {"locale": self.locale, "caseLevel": self.case_level,
                "caseFirst": self.case_first, "strength": self.strength,
                "numericOrdering": self.numeric,
                "alternate": "shifted" if self.shifted else "non-ignorable",
                "maxVariable": self.max_variable, "normalization": False,
                "backwards": self.backwards, "version": "57.1"}

    def key(self, text):
        """A sort key: equal keys are equal strings under this collation."""
        primary, secondary, tertiary = [], [], []
        for group, value, accents, upper in self._elements(text):
            if self.shifted and self._ignorable(group):
                continue
            primary.append((group, value))
            secondary.append(accents)
            tertiary.append(not upper if self.case_first == "upper" else upper)
        if self.backwards:
            secondary.reverse()
        levels = [tuple(primary)]
        if self.case_level and self.strength < 3:
            levels.append(tuple(tertiary))
        if self.strength >= 2:
            levels.append(tuple(secondary))
        if self.strength >= 3:
            levels.append(tuple(tertiary))
        if self.strength >= 5:
            levels.append(text)
        return tuple(levels)

    def _ignorable(self, group):
        return group == SPACE or (group == PUNCT and self.max_variable == "punct")

    def _elements(self, text):
        """(group, primary value, accents, is upper case) per character or digit run."""
        decomposed = unicodedata.normalize("NFD", text)
        i = 0
        while i < len(decomposed):
            char = decomposed[i]
            i += 1
            accents = ""
            while i < len(decomposed) and unicodedata.combining(decomposed[i]):
                accents += decomposed[i]
                i += 1
            if char.isdigit() and self.numeric:
                run = char
                while i < len(decomposed) and decomposed[i].isdigit():
                    run += decomposed[i]
                    i += 1
                yield DIGIT, int("".join(str(unicodedata.digit(c)) for c in run)), accents, False
            else:
                yield _group(char), char.casefold(), accents, char != char.lower()


def _group(char):
    if char.isspace():
        return SPACE
    category = unicodedata.category(char)
    if category[0] in "PS":
        return PUNCT
    if char.isdigit():
        return DIGIT
    return LETTER if category[0] == "L" else OTHER


def parse(spec):
    """The Collation for a command's ``collation`` field; None for none, ``simple`` or an empty
    document (a server reads ``{}`` as no collation). A malformed document is the server's
    error 2 (BadValue), naming the field."""
    if spec is None or spec == {}:
        return None
    if not isinstance(spec, dict):
        raise CommandError(14, f"BSON field 'collation' is the wrong type "
                               f"'{type(spec).__name__}', expected type 'object'")
    for name, value in spec.items():
        wanted = FIELDS.get(name)
        if wanted is None:
            raise CommandError(40415, f"BSON field 'collation.{name}' is an unknown field.")
        if not isinstance(value, wanted) or (wanted is int and isinstance(value, bool)):
            raise CommandError(14, f"BSON field 'collation.{name}' is the wrong type")
    if "locale" not in spec:
        raise CommandError(40414, "BSON field 'collation.locale' is missing but a required "
                                  "field")
    if spec["locale"] == "simple":
        return None
    strength = spec.get("strength", 3)
    if strength not in (1, 2, 3, 4, 5):
        raise CommandError(2, f"unable to parse collation: strength must be 1 to 5, "
                              f"got {strength}")
    if spec.get("caseFirst", "off") not in CASE_FIRST:
        raise CommandError(2, f"caseFirst must be one of {CASE_FIRST}: {spec['caseFirst']!r}")
    if spec.get("alternate", "non-ignorable") not in ("non-ignorable", "shifted"):
        raise CommandError(2, f"unknown alternate option: {spec['alternate']!r}")
    if spec.get("maxVariable", "punct") not in ("punct", "space"):
        raise CommandError(2, f"unknown maxVariable option: {spec['maxVariable']!r}")
    return Collation(spec["locale"], strength, spec.get("caseLevel", False),
                     spec.get("caseFirst", "off"), spec.get("numericOrdering", False),
                     spec.get("alternate") == "shifted", spec.get("maxVariable", "punct"),
                     spec.get("backwards", False))


@contextlib.contextmanager
def applied(spec, default=None):
    """Compare strings under ``spec`` (a collation document) while the block runs; without
    one, under ``default`` (the collection's), else as before (a statement of an update or
    delete inherits its command's)."""
    previous = getattr(_running, "collation", None)
    chosen = parse(spec) if spec is not None else (default or previous)
    _running.collation = chosen
    try:
        yield chosen
    finally:
        _running.collation = previous


def active():
    """The collation the running command compares strings under, or None (binary)."""
    return getattr(_running, "collation", None)


def compared(a, b):
    """(a, b) as the comparison should see them: collation keys for two strings while a
    collation applies, else unchanged."""
    chosen = active()
    if chosen is not None and isinstance(a, str) and isinstance(b, str):
        return chosen.key(a), chosen.key(b)
    return a, b

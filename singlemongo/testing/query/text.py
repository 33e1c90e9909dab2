"""Text indexes and ``$text`` search, as MongoDB 7.0 keeps and answers them (version 3 text
indexes), approximated where the server's linguistics go further.

- An index spec with ``"text"`` keys is stored as the server stores it: its key is the other
  fields around ``{_fts: "text", _ftsx: 1}``, the text fields are its ``weights`` (1 unless
  given), with ``default_language`` "english", ``language_override`` "language" and
  ``textIndexVersion`` 3. A collection has at most one text index.
- ``{$text: {$search, $caseSensitive, $diacriticSensitive, $language}}`` needs that index.
  The search string is terms, ``"quoted phrases"`` and ``-negated`` terms: a document
  matches when it holds every phrase, at least one term (when there are terms) and no negated
  term. Terms are compared stemmed (a plain English suffix stripper, not Snowball), case- and
  diacritic-insensitively by default, and English stop words are ignored.
- The score (``{$meta: "textScore"}`` in a projection or sort) is the server's per-field
  formula, ``weight * (0.5 * matches / tokens + 0.5)`` summed over the matched terms.
"""
import re
import unicodedata

from singlemongo.testing.query.codes import CommandError

SCORE = "\x00textScore"  # where a matched document carries its score until projected
STOP_WORDS = frozenset("a an and are as at be but by for from has have i in is it its of on "
                       "or that the this to was were will with".split())
WORD = re.compile(r"[^\W_]+", re.UNICODE)
SUFFIXES = ("ing", "edly", "ed", "es", "s")


def is_text_spec(key):
    return any(direction == "text" for direction in key.values())


def stored_spec(spec):
    """The index as a server keeps it: ``_fts``/``_ftsx`` in the key, the fields as weights."""
    key, weights = {}, dict(spec.get("weights") or {})
    for field, direction in spec["key"].items():
        if direction == "text":
            weights.setdefault(field, 1)
            if "_fts" not in key:
                key.update(_fts="text", _ftsx=1)
        else:
            key[field] = direction
    return dict(spec, key=key, weights=weights,
                default_language=spec.get("default_language", "english"),
                language_override=spec.get("language_override", "language"),
                textIndexVersion=3)


def index_of(indexes):
    """The collection's text index document, or None."""
    return next((i for i in indexes if i["key"].get("_fts") == "text"), None)


def _normal(word, case_sensitive, diacritic_sensitive):
    if not diacritic_sensitive:
        word = "".join(c for c in unicodedata.normalize("NFKD", word)
                       if not unicodedata.combining(c))
    return word if case_sensitive else word.lower()


def _stem(word):
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


def _tokens(text, options):
    words = [_normal(w, *options) for w in WORD.findall(text)]
    return [_stem(w) for w in words if w.lower() not in STOP_WORDS]


def parse_search(spec):
    """(terms, phrases, negated) of a ``$text`` operand, checked as the server checks it."""
    if not isinstance(spec, dict) or not isinstance(spec.get("$search"), str):
        raise CommandError(2, "$text needs a $search string")
    unknown = set(spec) - {"$search", "$language", "$caseSensitive", "$diacriticSensitive"}
    if unknown:
        raise CommandError(2, f"extra fields in $text: {sorted(unknown)}")
    options = (bool(spec.get("$caseSensitive")), bool(spec.get("$diacriticSensitive")))
    search = spec["$search"]
    phrases = [_normal(p, *options) for p in re.findall(r'"([^"]*)"', search)]
    rest = re.sub(r'"[^"]*"', " ", search).split()
    negated = {t for w in rest if w.startswith("-") for t in _tokens(w[1:], options)}
    terms = {t for w in rest if not w.startswith("-") for t in _tokens(w, options)}
    return terms, phrases, negated, options


def _field_texts(doc, field):
    value = doc
    for part in field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _all_strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _all_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _all_strings(v)


def search(docs, spec, index):
    """The documents ``$text`` matches, each carrying its score under SCORE."""
    if index is None:
        raise CommandError(27, "text index required for $text query")
    terms, phrases, negated, options = parse_search(spec)
    matched = []
    for doc in docs:
        texts = []  # (weight, text) of every indexed string
        for field, weight in index["weights"].items():
            strings = _all_strings(doc) if field == "$**" else _field_texts(doc, field)
            texts.extend((weight, s) for s in strings)
        tokens = [(w, _tokens(s, options)) for w, s in texts]
        found = {t for _, ts in tokens for t in ts}
        whole = [_normal(s, *options) for _, s in texts]
        if negated & found or not all(any(p in s for s in whole) for p in phrases):
            continue
        if terms and not terms & found:
            continue
        score = sum(weight * (0.5 * ts.count(t) / len(ts) + 0.5)
                    for weight, ts in tokens for t in terms if ts and t in ts)
        matched.append(dict(doc, **{SCORE: score or float(bool(phrases))}))
    return matched


def meta_fields(spec):
    """The fields of a projection or sort that ask for ``{$meta: "textScore"}``."""
    return [k for k, v in (spec or {}).items() if v == {"$meta": "textScore"}]


def add_scores(docs, scores, projection):
    """Projected documents with the score where the projection asks for it."""
    fields = meta_fields(projection)
    for doc, score in zip(docs, scores):
        for field in fields:
            if score is None:
                raise CommandError(40218, "query requires text score metadata, but it is not "
                                          "available")
            doc[field] = score
    return docs


def sort_spec(sort):
    """A sort with its textScore fields as the carried score, highest first."""
    return {(SCORE if v == {"$meta": "textScore"} else k): (-1 if v == {"$meta": "textScore"}
                                                           else v)
            for k, v in (sort or {}).items()} or None


def without_meta(spec):
    """A projection or sort without its textScore fields (the engine does not know them)."""
    return {k: v for k, v in (spec or {}).items() if v != {"$meta": "textScore"}} or None

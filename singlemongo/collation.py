"""Collation (as ``pymongo.collation``): language-specific string comparison."""
from __future__ import annotations

from typing import Any, Optional


class CollationStrength:
    """Collation strength levels (ICU comparison levels 1 to 5)."""
    PRIMARY = 1
    SECONDARY = 2
    TERTIARY = 3
    QUATERNARY = 4
    IDENTICAL = 5


class CollationCaseFirst:
    """Which case sorts first."""
    UPPER = "upper"
    LOWER = "lower"
    OFF = "off"


class CollationAlternate:
    """Whether whitespace and punctuation are considered base characters."""
    NON_IGNORABLE = "non-ignorable"
    SHIFTED = "shifted"


class CollationMaxVariable:
    """Which characters ``alternate: shifted`` ignores."""
    PUNCT = "punct"
    SPACE = "space"


class Collation:
    """``Collation(locale, caseLevel=None, caseFirst=None, strength=None, numericOrdering=None,
    alternate=None, maxVariable=None, normalization=None, backwards=None, **kwargs)``; the
    ``document`` is sent as the command's ``collation``."""

    __slots__ = ("_document",)

    def __init__(self, locale: str, caseLevel: Optional[bool] = None,
                 caseFirst: Optional[str] = None, strength: Optional[int] = None,
                 numericOrdering: Optional[bool] = None, alternate: Optional[str] = None,
                 maxVariable: Optional[str] = None, normalization: Optional[bool] = None,
                 backwards: Optional[bool] = None, **kwargs: Any) -> None:
        # PyMongo's checks (its validators: the same exception types and messages).
        from singlemongo.drop_in.common import validate_boolean, validate_integer, validate_string
        doc: dict[str, Any] = {"locale": validate_string("locale", locale)}
        for name, value, check in (
                ("caseLevel", caseLevel, validate_boolean),
                ("caseFirst", caseFirst, validate_string),
                ("strength", strength, validate_integer),
                ("numericOrdering", numericOrdering, validate_boolean),
                ("alternate", alternate, validate_string),
                ("maxVariable", maxVariable, validate_string),
                ("normalization", normalization, validate_boolean),
                ("backwards", backwards, validate_boolean)):
            if value is not None:
                doc[name] = check(name, value)
        doc.update(kwargs)
        self._document = doc

    @property
    def document(self) -> dict[str, Any]:
        """The collation as the document sent to the server."""
        return dict(self._document)

    def __repr__(self) -> str:
        return "Collation({})".format(", ".join(f"{k}={v!r}" for k, v in self._document.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Collation):
            return self._document == other._document
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(sorted((k, repr(v)) for k, v in self._document.items())))


def validate_collation_or_none(value: Any) -> Optional[dict[str, Any]]:
    """The collation document of a Collation or a mapping, None for None; TypeError for
    anything else (PyMongo's validator, which libraries import from here)."""
    from singlemongo.arguments import validate_collation
    return validate_collation(value)

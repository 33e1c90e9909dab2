"""SASLprep (RFC 4013) for SCRAM-SHA-256 passwords, on the standard library's stringprep.

Every intermediate form of the password is a SecretText, so a failure here shows no
password among the frame's locals."""
import stringprep
import unicodedata

from singlemongo.options.uri import SecretText

_PROHIBITED = (stringprep.in_table_c12, stringprep.in_table_c21_c22, stringprep.in_table_c3,
               stringprep.in_table_c4, stringprep.in_table_c5, stringprep.in_table_c6,
               stringprep.in_table_c7, stringprep.in_table_c8, stringprep.in_table_c9)


def _prohibited(c):
    return any(in_table(c) for in_table in _PROHIBITED)


def saslprep(text):
    """The prepared password (a SecretText); ValueError names the rule it breaks."""
    if not isinstance(text, str):
        raise TypeError("the password must be a str")
    # RFC 4013 2.1 and 2.2: map non-ASCII spaces to a space, drop "commonly mapped to nothing".
    text = SecretText("".join(" " if stringprep.in_table_c12(c) else c
                              for c in text if not stringprep.in_table_b1(c)))
    text = SecretText(unicodedata.normalize("NFKC", text))
    if any(map(_prohibited, text)):
        raise ValueError("the password contains a character SASLprep prohibits (RFC 4013)")
    if any(map(stringprep.in_table_d1, text)) and (
            not (stringprep.in_table_d1(text[0]) and stringprep.in_table_d1(text[-1]))
            or any(map(stringprep.in_table_d2, text))):
        raise ValueError("the password has invalid bidirectional text (RFC 4013)")
    return text

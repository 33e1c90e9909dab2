"""SASLprep (RFC 4013) for SCRAM-SHA-256 passwords, on the standard library's stringprep."""
import stringprep
import unicodedata

_PROHIBITED = (stringprep.in_table_c12, stringprep.in_table_c21_c22, stringprep.in_table_c3,
               stringprep.in_table_c4, stringprep.in_table_c5, stringprep.in_table_c6,
               stringprep.in_table_c7, stringprep.in_table_c8, stringprep.in_table_c9)


def saslprep(text):
    if not isinstance(text, str):
        raise TypeError("the password must be a str")
    text = "".join(" " if stringprep.in_table_c12(c) else c
                   for c in text if not stringprep.in_table_b1(c))
    text = unicodedata.normalize("NFKC", text)
    if not text:
        return text
    for c in text:
        if any(in_table(c) for in_table in _PROHIBITED):
            raise ValueError("the password contains a character SASLprep prohibits")
    if any(stringprep.in_table_d1(c) for c in text):
        if not (stringprep.in_table_d1(text[0]) and stringprep.in_table_d1(text[-1])) or \
                any(stringprep.in_table_d2(c) for c in text):
            raise ValueError("the password has invalid bidirectional text")
    return text

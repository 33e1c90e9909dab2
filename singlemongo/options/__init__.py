"""Connection strings and options (pure): the URI syntax, the option table and value types,
validated ClientOptions, mongodb+srv record rules, percent-decoding and redaction."""

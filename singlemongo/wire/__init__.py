"""The wire: OP_MSG/OP_QUERY/OP_COMPRESSED messages (pure), document checks, and the
connection (one socket, TLS) that carries them."""

"""The wire codec, pure: OP_MSG/OP_QUERY/OP_COMPRESSED messages, compression and document
checks. The connection that carries them (one socket, TLS, SOCKS5) is the engine's
(``singlemongo.engine.connection``)."""

"""Decoding configs as a given nats-server release does: the exact and fast paths, Go's JSON syntax errors."""

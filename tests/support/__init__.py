"""Helpers shared by the test suite (real nats-server processes and clients)."""

"""Fixtures shared by the service tests: one in-process Advisor server a test module, and a client of it.

A module may define its own ``server`` or ``client`` (e.g. a server process, or a Matches client) and pytest uses
that one instead. The service modules are imported inside the fixtures, so tests that never ask for them do not
need the generated gRPC stubs.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def server():
    """An Advisor server on a free loopback port (:func:`service_helpers.running_server`), one per test module."""
    from service_helpers import running_server

    with running_server() as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    """A :class:`feudo_ai.client.AdvisorClient` of the module's server."""
    from feudo_ai.client import AdvisorClient

    with AdvisorClient(server.address) as c:
        yield c


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server for the session (:class:`pg_helpers.PostgresServer`); a test without one fails
    with the reason (PostgreSQL not installed), it is never skipped."""
    from pg_helpers import PostgresMissing, PostgresServer

    try:
        server = PostgresServer()
    except PostgresMissing as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield server
    finally:
        server.stop()

"""The match store on PostgreSQL (psycopg 3, a psycopg_pool connection pool), shared by several replicas.

The SQL is :class:`~feudo_ai.matches.store.SQLStore`'s; here are only PostgreSQL's dialect: ``%s`` placeholders,
the clock (``clock_timestamp()``), migrations under an advisory lock, a taken key
(``UniqueViolation``) as :class:`~feudo_ai.matches.store.Conflict`, and notifications: each transaction that logs
actions, creates a match or frees a lease sends ``pg_notify('feudo_matches', payload)``, delivered on commit to the
``LISTEN`` connection of every replica (:meth:`PostgresStore.listen`, its own connection outside the pool, opened
again if it drops).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Callable
from urllib.parse import urlsplit, urlunsplit

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg_pool import ConnectionPool
except ImportError as e:  # pragma: no cover - the dependency is declared; said plainly if it is missing
    raise ImportError(f"a postgresql:// database needs psycopg 3 and psycopg-pool (pip install "
                      f"'feudo-ai[postgres]'): {e}") from None

from .store import Conflict, SQLStore, StoreError

log = logging.getLogger("feudo.matches")

CHANNEL = "feudo_matches"
MIGRATION_LOCK = 0x6665756430  # pg_advisory_xact_lock key of the migrations ("feud0")
_PLACEHOLDER = re.compile(r"\?")


def redacted(url: str) -> str:
    """The URL without its password (what is logged and printed)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


class PostgresStore(SQLStore):
    shared = True
    NOW = "EXTRACT(EPOCH FROM clock_timestamp())::DOUBLE PRECISION"

    def __init__(self, url: str, pool_size: int = 10, connect_timeout: float = 10.0):
        self.url = url
        self.path = redacted(url)
        self._closed = threading.Event()
        self._listeners: list[threading.Thread] = []  # one per service listening (Feudo's, Fief 2's)
        self._listen_conn = None
        self.pool = None
        try:
            with psycopg.connect(url, connect_timeout=max(1, int(connect_timeout))):
                pass  # the reason a database cannot be reached, in one line (the pool would only time out)
            self.pool = ConnectionPool(url, min_size=1, max_size=max(1, pool_size), open=True,
                                       kwargs={"autocommit": True}, timeout=connect_timeout,
                                       name="feudo-matches")
            self.pool.wait(timeout=connect_timeout)
        except Exception as e:  # noqa: BLE001 - psycopg's reasons vary: one line naming the database
            if self.pool is not None:
                self.pool.close()
            reason = " ".join(str(e).split()) or type(e).__name__
            raise StoreError(f"{self.path}: cannot connect: {reason[:300]}") from None
        self._migrate()

    @staticmethod
    def _sql(sql: str) -> str:
        return _PLACEHOLDER.sub("%s", sql)

    def _tx(self, work, lock_migrations: bool = False):
        try:
            with self.pool.connection() as conn:
                with conn.transaction():
                    if lock_migrations:
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))

                    def q(sql: str, args: tuple) -> list:
                        cur = conn.execute(self._sql(sql), args)
                        return cur.fetchall() if cur.description is not None else []
                    return work(q)
        except pg_errors.UniqueViolation as e:
            raise Conflict(str(e).strip()) from None
        except psycopg.Error as e:
            raise StoreError(f"{self.path}: {str(e).strip()}") from None

    def _read(self, sql: str, args: tuple = ()) -> list:
        try:
            with self.pool.connection() as conn:
                return conn.execute(self._sql(sql), args).fetchall()
        except psycopg.Error as e:
            raise StoreError(f"{self.path}: {str(e).strip()}") from None

    def _notify(self, q, payload: str) -> None:
        q("SELECT pg_notify(?, ?)", (CHANNEL, payload))

    # -- LISTEN -------------------------------------------------------------------------------------------
    def listen(self, on_event: Callable[[str], None]) -> None:
        """A thread calls ``on_event(payload)`` for every notification (this replica's own too); each call adds
        one, with its own connection (the services of both games on one store each listen)."""
        def run() -> None:
            backoff = 0.2
            while not self._closed.is_set():
                try:
                    with psycopg.connect(self.url, autocommit=True) as conn:
                        self._listen_conn = conn
                        conn.execute(f"LISTEN {CHANNEL}")
                        on_event("listening")  # (re)connected: whatever was missed meanwhile is caught up
                        backoff = 0.2
                        while not self._closed.is_set():
                            for n in conn.notifies(timeout=0.5):
                                try:
                                    on_event(n.payload)
                                except Exception:  # noqa: BLE001 - one bad event must not stop the listener
                                    log.exception("notification %r failed", n.payload)
                except Exception as e:  # noqa: BLE001 - the connection dropped: open it again
                    if self._closed.is_set():
                        return
                    log.warning("LISTEN connection to %s lost (%s); reconnecting", self.path,
                                str(e).strip().splitlines()[0] if str(e) else type(e).__name__)
                    time.sleep(backoff)
                    backoff = min(5.0, backoff * 2)
        listener = threading.Thread(target=run, name="matches-listen", daemon=True)
        self._listeners.append(listener)
        listener.start()

    def close(self) -> None:
        self._closed.set()
        for listener in self._listeners:
            listener.join(2.0)
        self.pool.close()

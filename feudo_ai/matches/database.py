"""The store of a ``--db`` value: :func:`open_store` chooses by the URL, above both stores (:mod:`.store`, SQLite and
the shared SQL; :mod:`.store_pg`, PostgreSQL), so neither imports the other's module back."""

from __future__ import annotations

from .store import SQLiteStore, SQLStore
from .store_pg import PostgresStore


def is_postgres_url(db: str) -> bool:
    return db.startswith(("postgresql://", "postgres://"))


def open_store(db: str = ":memory:", pool_size: int = 10) -> SQLStore:
    """The store of ``db``: a PostgreSQL URL, or a SQLite path (``":memory:"``)."""
    if is_postgres_url(db):
        return PostgresStore(db, pool_size=pool_size)
    return SQLiteStore(db)

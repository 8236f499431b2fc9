"""Persistence of matches: each match is its setup and its action log, nothing else; one interface, two databases.

:func:`feudo_ai.matches.database.open_store` chooses by the URL: ``postgresql://...`` (or ``postgres://``) is :class:`PostgresStore`
(psycopg 3 with a connection pool, :mod:`.store_pg`): several replicas share it; anything else is a SQLite file
(:class:`SQLiteStore`; ``":memory:"``: nothing survives the process), the zero-configuration default of one server.
Both run the same SQL (:class:`SQLStore`); the few dialect differences (placeholders, the database's clock,
locking a migration, the error of a taken key, notifications) are in the dialect hooks of each class, nowhere else.

Every write is one transaction committed before the call that made it returns (SQLite: ``synchronous=FULL`` in
WAL mode), so a server killed at any moment (``kill -9``) restarts with every acknowledged action. A position is
never stored: it is the setup's start position with the logged actions applied. Seat tokens are stored as
hashes only (:mod:`feudo_ai.matches.tokens`). Each action is a row keyed by ``(match_id, idx)``: an index is
taken once, whichever server writes it (:class:`Conflict` for the others): that key is what makes a submit apply
once across replicas.

**Schema versions.** ``schema_migrations`` lists the migrations applied (:data:`MIGRATIONS`, each written once
for both databases); opening a store applies the missing ones in one transaction (on PostgreSQL under an advisory
lock, so replicas starting together migrate once). A database of a newer version than this code is refused
(:class:`SchemaTooNew`, one line naming both versions). A SQLite file made before versions existed is version 1.

**Games.** Feudo's and Fief 2's hosted matches share the tables: a match row names its game (``matches.game``,
:data:`FEUDO` or :data:`FIEF2`; migration 3 added the column, every row before it being Feudo's, hence its default),
and every call that finds matches (by id or by listing) takes the ``game`` of the service asking, so a service never
sees the other game's matches. Everything else (an action is an integer, a setup and a summary are JSON, seat
tokens are hashes, retiring and bot leases) is the same for both games, so one set of tables serves both rather
than a copy of each per game; ids are random 64-bit hex, unique across both (the primary key).

A match retired from the server's memory (finished, or idle: see :class:`feudo_ai.matches.hosting.HostedMatches`)
has a row in ``retired`` with its public summary. ``matches.summary`` is the match's public summary as of its last
action, written in the same transaction as the action (what ``ListMatches`` shows on a shared database).

**Bot leases** (``bot_leases``, ``replicas``): the replica that moves a match's bots holds the match's lease, an
owner and an expiry by the database's clock, renewed by a heartbeat; an expired lease is anybody's to take.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, Iterable

SCHEMA_VERSION = 3
FEUDO = "feudo"  # matches.game of Feudo's matches (the column's default: every row before migration 3)
FIEF2 = "fief2"  # of Fief 2's

# Each migration once, for both databases: "DOUBLE PRECISION" is a float on both (REAL affinity in SQLite),
# statements use "?" placeholders (PostgresStore turns them into "%s").
MIGRATIONS: dict[int, list[str]] = {
    1: [
        """CREATE TABLE IF NOT EXISTS matches (
            id TEXT PRIMARY KEY,
            setup TEXT NOT NULL,          -- MatchSetup.to_dict() as JSON
            token_hashes TEXT NOT NULL,   -- {"seat": sha256 hex} for the external seats
            created DOUBLE PRECISION NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS actions (
            match_id TEXT NOT NULL REFERENCES matches(id),
            idx INTEGER NOT NULL,         -- 0-based position in the match's action log
            action INTEGER NOT NULL,
            PRIMARY KEY (match_id, idx))""",
        """CREATE TABLE IF NOT EXISTS retired (
            match_id TEXT PRIMARY KEY REFERENCES matches(id),
            finished INTEGER NOT NULL,    -- 1: over (final); 0: idle, loaded back on its next call
            summary TEXT NOT NULL)""",
    ],
    2: [  # replicas: summaries without replaying, bot leases
        "ALTER TABLE matches ADD COLUMN summary TEXT",             # Match.summary() as JSON after its last action
        "ALTER TABLE matches ADD COLUMN bots INTEGER NOT NULL DEFAULT 0",      # 1: it has bot seats
        "ALTER TABLE matches ADD COLUMN finished INTEGER NOT NULL DEFAULT 0",  # 1: over
        """CREATE TABLE bot_leases (
            match_id TEXT PRIMARY KEY REFERENCES matches(id),
            owner TEXT NOT NULL,          -- the replica moving the match's bots
            expires DOUBLE PRECISION NOT NULL)""",
        """CREATE TABLE replicas (
            id TEXT PRIMARY KEY,
            expires DOUBLE PRECISION NOT NULL)""",
    ],
    3: [  # Fief 2's matches beside Feudo's
        "ALTER TABLE matches ADD COLUMN game TEXT NOT NULL DEFAULT 'feudo'",  # FEUDO or FIEF2
        "CREATE INDEX matches_game_created ON matches (game, created)",
    ],
}
assert max(MIGRATIONS) == SCHEMA_VERSION


@dataclass
class StoredMatch:
    id: str
    setup: dict
    token_hashes: dict[int, str]
    created: float
    actions: list[int]


class StoreError(Exception):
    """The database refused a write (e.g. an action index already logged): nothing was written."""


class Conflict(StoreError):
    """A key was already taken (an action index logged by another call or another replica): nothing was written."""


class SchemaTooNew(StoreError):
    """The database was migrated by a newer version of this code."""


Query = Callable[[str, tuple], list]  # run one statement in the current transaction, its rows


class SQLStore(ABC):
    """The store over a SQL database (subclasses give the connection and the dialect). Thread-safe."""

    shared = False  # True: several servers may use the database at once (catch-up, leases, notifications)
    NOW = ""  # SQL expression: the database's clock, seconds since the epoch

    path: str  # what the operator named (a URL without its password)

    # -- dialect hooks ------------------------------------------------------------------------------------
    @abstractmethod
    def _tx(self, work: Callable[[Query], object], lock_migrations: bool = False):
        """The dialect's own (SQLite, PostgreSQL)."""

    @abstractmethod
    def _read(self, sql: str, args: tuple = ()) -> list:
        """The dialect's own (SQLite, PostgreSQL)."""

    def _notify(self, q: Query, payload: str) -> None:
        """Tell the other replicas (on commit); nothing on a database of one server."""

    @abstractmethod
    def close(self) -> None:
        """The dialect's own (SQLite, PostgreSQL)."""

    # -- schema -------------------------------------------------------------------------------------------
    def _migrate(self) -> None:
        def work(q: Query) -> None:
            q("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
              "applied DOUBLE PRECISION NOT NULL)", ())
            rows = q("SELECT MAX(version) FROM schema_migrations", ())
            current = rows[0][0] or 0  # 0 also for a file made before versions: migration 1 is IF NOT EXISTS
            if current > SCHEMA_VERSION:
                raise SchemaTooNew(f"{self.path}: the database's schema is version {current}, newer than this "
                                   f"server's {SCHEMA_VERSION}: run a newer feudo-ai on it (or use another database)")
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for sql in MIGRATIONS[version]:
                    q(sql, ())
                q(f"INSERT INTO schema_migrations (version, applied) VALUES (?, {self.NOW})", (version,))
        self._tx(work, lock_migrations=True)

    def schema_version(self) -> int:
        return self._read("SELECT MAX(version) FROM schema_migrations")[0][0] or 0

    # -- matches ------------------------------------------------------------------------------------------
    def create_match(self, match_id: str, setup: dict, token_hashes: dict[int, str], created: float,
                     actions: Iterable[int] = (), summary: dict | None = None, bots: bool = False,
                     game: str = FEUDO) -> None:
        """The match row of ``game`` and its first actions (chance outcomes drawn at creation) in one transaction."""
        actions = list(actions)

        def work(q: Query) -> None:
            q("INSERT INTO matches (id, setup, token_hashes, created, summary, bots, finished, game) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
              (match_id, json.dumps(setup, sort_keys=True),
               json.dumps({str(k): v for k, v in token_hashes.items()}), created,
               None if summary is None else json.dumps(summary, sort_keys=True), int(bool(bots)),
               int(bool(summary and summary.get("finished"))), game))
            for i, a in enumerate(actions):
                q("INSERT INTO actions (match_id, idx, action) VALUES (?, ?, ?)", (match_id, i, a))
            self._notify(q, f"new:{match_id}")
        self._tx(work)

    def append_actions(self, match_id: str, first_index: int, actions: list[int], summary: dict | None = None,
                       finished: bool = False) -> None:
        """Log ``actions`` at indices ``first_index, ...`` in one transaction, with the summary after them
        (:class:`Conflict` if an index is taken: nothing written). An idle match acted on is live again."""
        def work(q: Query) -> None:
            for i, a in enumerate(actions):
                q("INSERT INTO actions (match_id, idx, action) VALUES (?, ?, ?)", (match_id, first_index + i, a))
            if summary is not None:
                q("UPDATE matches SET summary = ?, finished = ? WHERE id = ?",
                  (json.dumps(summary, sort_keys=True), int(bool(finished)), match_id))
            if self.shared:
                q("DELETE FROM retired WHERE match_id = ? AND finished = 0", (match_id,))
            self._notify(q, f"act:{match_id}:{first_index + len(actions)}")
        self._tx(work)

    def actions_from(self, match_id: str, start: int) -> list[int]:
        """The logged actions of the match from index ``start`` on (the tail a replica has not applied yet)."""
        rows = self._read("SELECT idx, action FROM actions WHERE match_id = ? AND idx >= ? ORDER BY idx",
                          (match_id, start))
        if any(idx != start + i for i, (idx, _) in enumerate(rows)):
            raise StoreError(f"{self.path}: match {match_id}: the action log has a gap (damaged database)")
        return [a for _, a in rows]

    def load_all(self, live_only: bool = False, game: str = FEUDO) -> list[StoredMatch]:
        """Every match of ``game`` (``live_only``: those not retired), oldest first."""
        where = " AND id NOT IN (SELECT match_id FROM retired)" if live_only else ""
        rows = self._read(f"SELECT id, setup, token_hashes, created FROM matches WHERE game = ?{where} "
                          f"ORDER BY created, id", (game,))
        return [self._stored(*row) for row in rows]

    def load(self, match_id: str, game: str = FEUDO) -> StoredMatch | None:
        """One match of ``game``, or None if there is none with that id."""
        rows = self._read("SELECT id, setup, token_hashes, created FROM matches WHERE id = ? AND game = ?",
                          (match_id, game))
        return self._stored(*rows[0]) if rows else None

    def _stored(self, mid: str, setup: str, hashes: str, created: float) -> StoredMatch:
        return StoredMatch(mid, json.loads(setup), {int(k): v for k, v in json.loads(hashes).items()},
                           float(created), self.actions_from(mid, 0))

    def retire(self, match_id: str, finished: bool, summary: dict) -> None:
        """Mark a match retired from memory, with its public summary."""
        self._tx(lambda q: q("INSERT INTO retired (match_id, finished, summary) VALUES (?, ?, ?) "
                             "ON CONFLICT (match_id) DO UPDATE SET finished = excluded.finished, "
                             "summary = excluded.summary",
                             (match_id, int(bool(finished)), json.dumps(summary, sort_keys=True))))

    def unretire(self, match_id: str) -> None:
        """A retired (idle) match is live again."""
        self._tx(lambda q: q("DELETE FROM retired WHERE match_id = ?", (match_id,)))

    def retired(self, match_id: str, game: str = FEUDO) -> tuple[bool, dict] | None:
        """(finished, summary) of a retired match of ``game``; None if it is not retired (or not of ``game``)."""
        rows = self._read("SELECT r.finished, r.summary FROM retired r JOIN matches m ON m.id = r.match_id "
                          "WHERE r.match_id = ? AND m.game = ?", (match_id, game))
        return None if not rows else (bool(rows[0][0]), json.loads(rows[0][1]))

    def retired_summaries(self, limit: int, game: str = FEUDO) -> list[dict]:
        """The summaries of the ``limit`` most recently created retired matches of ``game``, oldest first."""
        rows = self._read("SELECT r.summary FROM retired r JOIN matches m ON m.id = r.match_id WHERE m.game = ? "
                          "ORDER BY m.created DESC, m.id DESC LIMIT ?", (game, limit))
        return [json.loads(r[0]) for r in reversed(rows)]

    def live_summaries(self, limit: int, game: str = FEUDO) -> list[tuple[str, dict | None]]:
        """(id, summary as of its last action or None) of the ``limit`` most recently created matches of ``game``
        that are not retired, oldest first."""
        rows = self._read("SELECT id, summary FROM matches WHERE game = ? AND id NOT IN (SELECT match_id FROM "
                          "retired) ORDER BY created DESC, id DESC LIMIT ?", (game, limit))
        return [(mid, None if s is None else json.loads(s)) for mid, s in reversed(rows)]

    def action_count(self, match_id: str) -> int:
        return self._read("SELECT COUNT(*) FROM actions WHERE match_id = ?", (match_id,))[0][0]

    # -- replicas and bot leases --------------------------------------------------------------------------
    def heartbeat(self, replica: str, ttl: float) -> int:
        """This replica is alive for ``ttl`` more seconds; returns how many replicas are alive (at least 1)."""
        def work(q: Query) -> int:
            q(f"INSERT INTO replicas (id, expires) VALUES (?, {self.NOW} + ?) "
              f"ON CONFLICT (id) DO UPDATE SET expires = excluded.expires", (replica, ttl))
            q(f"DELETE FROM replicas WHERE expires < {self.NOW} - 60", ())
            return q(f"SELECT COUNT(*) FROM replicas WHERE expires >= {self.NOW}", ())[0][0]
        return max(1, self._tx(work))

    def leave(self, replica: str) -> None:
        """This replica stops: its leases are free at once, and it no longer counts."""
        def work(q: Query) -> None:
            q("DELETE FROM bot_leases WHERE owner = ?", (replica,))
            q("DELETE FROM replicas WHERE id = ?", (replica,))
            self._notify(q, "leases")
        self._tx(work)

    def claim(self, match_id: str, owner: str, ttl: float) -> bool:
        """Take (or renew) the lease of the match's bots: True if ``owner`` holds it now (it was free, expired or
        its own)."""
        def work(q: Query) -> bool:
            rows = q(f"INSERT INTO bot_leases (match_id, owner, expires) VALUES (?, ?, {self.NOW} + ?) "
                     f"ON CONFLICT (match_id) DO UPDATE SET owner = excluded.owner, expires = excluded.expires "
                     f"WHERE bot_leases.owner = excluded.owner OR bot_leases.expires < {self.NOW} "
                     f"RETURNING owner", (match_id, owner, ttl))
            return bool(rows)
        return self._tx(work)

    def renew(self, owner: str, ttl: float) -> set[str]:
        """Extend every lease ``owner`` still holds; the ids of those matches (a lease lost is not among them)."""
        return {r[0] for r in self._tx(lambda q: q(
            f"UPDATE bot_leases SET expires = {self.NOW} + ? WHERE owner = ? AND expires >= {self.NOW} "
            f"RETURNING match_id", (ttl, owner)))}

    def release(self, match_id: str, owner: str) -> None:
        def work(q: Query) -> None:
            q("DELETE FROM bot_leases WHERE match_id = ? AND owner = ?", (match_id, owner))
            self._notify(q, "leases")
        self._tx(work)

    def unleased(self, limit: int, game: str = FEUDO) -> tuple[list[str], int]:
        """Matches of ``game`` whose bots nobody moves (bot seats, not over, not retired, no lease or an expired
        one), oldest first, at most ``limit``; and the number of leases of ``game``'s matches held now."""
        rows = self._read(f"SELECT m.id FROM matches m LEFT JOIN bot_leases l ON l.match_id = m.id "
                          f"WHERE m.game = ? AND m.bots = 1 AND m.finished = 0 AND m.id NOT IN (SELECT match_id "
                          f"FROM retired) AND (l.match_id IS NULL OR l.expires < {self.NOW}) ORDER BY m.created "
                          f"LIMIT ?", (game, limit))
        held = self._read(f"SELECT COUNT(*) FROM bot_leases l JOIN matches m ON m.id = l.match_id "
                          f"WHERE m.game = ? AND l.expires >= {self.NOW}", (game,))[0][0]
        return [r[0] for r in rows], held

    def listen(self, on_event: Callable[[str], None]) -> None:
        """Call ``on_event(payload)`` for what other replicas commit (nothing on a database of one server)."""


class SQLiteStore(SQLStore):
    """A match database in the SQLite file ``path`` (``":memory:"``: nothing survives the process)."""

    NOW = "((julianday('now') - 2440587.5) * 86400.0)"

    def __init__(self, path: str = ":memory:"):
        self.path = str(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        with self._lock:
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
        self._migrate()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _tx(self, work, lock_migrations: bool = False):
        """Run ``work`` in one transaction, committed before returning; StoreError rolls all back."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                out = work(lambda sql, args: self._db.execute(sql, args).fetchall())
                self._db.execute("COMMIT")
                return out
            except (sqlite3.Error, StoreError) as e:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(e, StoreError):
                    raise
                kind = Conflict if isinstance(e, sqlite3.IntegrityError) and "UNIQUE" in str(e) else StoreError
                raise kind(str(e)) from None

    def _read(self, sql: str, args: tuple = ()) -> list:
        with self._lock:
            return self._db.execute(sql, args).fetchall()


Store = SQLiteStore  # the historical name

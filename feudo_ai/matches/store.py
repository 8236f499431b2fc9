"""SQLite persistence of matches: each match is its setup and its action log, nothing else.

Every write is one transaction committed before the call that made it returns (``synchronous=FULL`` in WAL
mode), so a server killed at any moment (``kill -9``) restarts with every acknowledged action. A position is
never stored: it is the setup's start position with the logged actions applied. Seat tokens are stored as
hashes only (:mod:`feudo_ai.matches.tokens`).

A match retired from the server's memory (finished, or idle: see :class:`feudo_ai.matches.service.MatchService`)
has a row in ``retired`` with its public summary (what ``ListMatches`` shows; for a finished match its winners and
VP, so that its record is read without replaying it). A server starting loads only the matches without one; a
retired match is read from here, or loaded back, on demand.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass

SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    setup TEXT NOT NULL,          -- MatchSetup.to_dict() as JSON
    token_hashes TEXT NOT NULL,   -- {"seat": sha256 hex} for the external seats
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS actions (
    match_id TEXT NOT NULL REFERENCES matches(id),
    idx INTEGER NOT NULL,         -- 0-based position in the match's action log
    action INTEGER NOT NULL,
    PRIMARY KEY (match_id, idx)
);
CREATE TABLE IF NOT EXISTS retired (
    match_id TEXT PRIMARY KEY REFERENCES matches(id),
    finished INTEGER NOT NULL,    -- 1: over (final); 0: idle, loaded back on its next call
    summary TEXT NOT NULL         -- Match.summary() as JSON when it was retired
);
"""


@dataclass
class StoredMatch:
    id: str
    setup: dict
    token_hashes: dict[int, str]
    created: float
    actions: list[int]


class StoreError(Exception):
    """The database refused a write (e.g. an action index already logged): nothing was written."""


class Store:
    """A match database at ``path`` (``":memory:"``: nothing survives the process). Thread-safe."""

    def __init__(self, path: str = ":memory:"):
        self.path = str(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        with self._lock:
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _write(self, statements: list[tuple[str, tuple]]) -> None:
        """Run ``statements`` in one transaction, committed before returning; StoreError rolls all back."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for sql, args in statements:
                    self._db.execute(sql, args)
                self._db.execute("COMMIT")
            except sqlite3.Error as e:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise StoreError(str(e)) from None

    def create_match(self, match_id: str, setup: dict, token_hashes: dict[int, str], created: float,
                     actions: list[int] = ()) -> None:
        """The match row and its first actions (chance outcomes drawn at creation) in one transaction."""
        stmts = [("INSERT INTO matches (id, setup, token_hashes, created) VALUES (?, ?, ?, ?)",
                  (match_id, json.dumps(setup, sort_keys=True),
                   json.dumps({str(k): v for k, v in token_hashes.items()}), created))]
        stmts += [("INSERT INTO actions (match_id, idx, action) VALUES (?, ?, ?)", (match_id, i, a))
                  for i, a in enumerate(actions)]
        self._write(stmts)

    def append_actions(self, match_id: str, first_index: int, actions: list[int]) -> None:
        """Log ``actions`` at indices ``first_index, ...`` in one transaction (StoreError if one is taken)."""
        self._write([("INSERT INTO actions (match_id, idx, action) VALUES (?, ?, ?)", (match_id, first_index + i, a))
                     for i, a in enumerate(actions)])

    def load_all(self, live_only: bool = False) -> list[StoredMatch]:
        """Every match (``live_only``: those not retired), oldest first."""
        where = " WHERE id NOT IN (SELECT match_id FROM retired)" if live_only else ""
        with self._lock:
            rows = self._db.execute(f"SELECT id, setup, token_hashes, created FROM matches{where} "
                                    f"ORDER BY created, id").fetchall()
            return [self._stored(*row) for row in rows]

    def load(self, match_id: str) -> StoredMatch | None:
        """One match, or None if there is none with that id."""
        with self._lock:
            row = self._db.execute("SELECT id, setup, token_hashes, created FROM matches WHERE id = ?",
                                   (match_id,)).fetchone()
            return None if row is None else self._stored(*row)

    def _stored(self, mid: str, setup: str, hashes: str, created: float) -> StoredMatch:
        rows_a = self._db.execute("SELECT idx, action FROM actions WHERE match_id = ? ORDER BY idx",
                                  (mid,)).fetchall()
        if any(idx != i for i, (idx, _) in enumerate(rows_a)):
            raise StoreError(f"{self.path}: match {mid}: the action log has a gap (damaged database)")
        return StoredMatch(mid, json.loads(setup), {int(k): v for k, v in json.loads(hashes).items()}, created,
                           [a for _, a in rows_a])

    def retire(self, match_id: str, finished: bool, summary: dict) -> None:
        """Mark a match retired from memory, with its public summary."""
        self._write([("INSERT OR REPLACE INTO retired (match_id, finished, summary) VALUES (?, ?, ?)",
                      (match_id, int(bool(finished)), json.dumps(summary, sort_keys=True)))])

    def unretire(self, match_id: str) -> None:
        """A retired (idle) match is live again."""
        self._write([("DELETE FROM retired WHERE match_id = ?", (match_id,))])

    def retired(self, match_id: str) -> tuple[bool, dict] | None:
        """(finished, summary) of a retired match; None if it is not retired."""
        with self._lock:
            row = self._db.execute("SELECT finished, summary FROM retired WHERE match_id = ?",
                                   (match_id,)).fetchone()
        return None if row is None else (bool(row[0]), json.loads(row[1]))

    def retired_summaries(self, limit: int) -> list[dict]:
        """The summaries of the ``limit`` most recently created retired matches, oldest first."""
        with self._lock:
            rows = self._db.execute("SELECT r.summary FROM retired r JOIN matches m ON m.id = r.match_id "
                                    "ORDER BY m.created DESC, m.id DESC LIMIT ?", (limit,)).fetchall()
        return [json.loads(r[0]) for r in reversed(rows)]

    def action_count(self, match_id: str) -> int:
        with self._lock:
            (n,) = self._db.execute("SELECT COUNT(*) FROM actions WHERE match_id = ?", (match_id,)).fetchone()
        return n

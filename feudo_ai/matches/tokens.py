"""Seat tokens: a secret per external seat, shown once at creation; only its hash is stored.

Tokens come from :func:`secrets.token_urlsafe`; the store keeps their SHA-256 (so a copy of the database does not
let anyone act for a seat), and checks compare digests with :func:`hmac.compare_digest` (constant time).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_BYTES = 24


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_matches(token: str, stored_hash: str) -> bool:
    """Whether ``token`` is the one whose hash is ``stored_hash`` (constant-time comparison)."""
    return hmac.compare_digest(token_hash(token).encode("ascii"), stored_hash.encode("ascii"))

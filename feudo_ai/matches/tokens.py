"""Seat tokens: a secret per external seat, shown once at creation; only its hash is stored.

Tokens are 32 letters and digits drawn with :mod:`secrets` (about 190 bits). Not ``token_urlsafe``: its tokens
can start with ``-``, and ``feudo play --token -abc...`` then reads as an option (a CI run found it). The store
keeps their SHA-256 (so a copy of the database does not let anyone act for a seat), and checks compare digests with :func:`hmac.compare_digest` (constant time).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string

TOKEN_ALPHABET = string.ascii_letters + string.digits
TOKEN_LENGTH = 32


def new_token() -> str:
    """A fresh seat token: safe to paste after ``--token`` in a shell (no leading ``-``, no quoting needed)."""
    return "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(TOKEN_LENGTH))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_matches(token: str, stored_hash: str) -> bool:
    """Whether ``token`` is the one whose hash is ``stored_hash`` (constant-time comparison)."""
    return hmac.compare_digest(token_hash(token).encode("ascii"), stored_hash.encode("ascii"))

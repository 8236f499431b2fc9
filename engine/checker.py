"""Reading what comes from outside the engine: JSON text with its traps closed, and typed field access.

The primitives of the validation layer (:mod:`engine.validate`), shared by every reader: ruleset files
(:mod:`engine.ruleset`), map files (:mod:`engine.board`) and game states (:mod:`engine.serialize`, game records),
so that a hostile or mistaken document fails the same way everywhere: one exception naming the field path
(``basic.json: army[2].colour: unknown field ...``, ``state.won[3][2]: expected ...``), never a traceback from deep
inside the rules or the C core. They know nothing of the rules, so every reader can import them.

* :func:`parse_json` / :func:`read_json_file`: JSON text (or bytes) with the JSON-level traps closed --
  undecodable bytes, integers of thousands of digits, ``NaN``/``Infinity``, nesting deep enough to exhaust
  the Python stack, oversized documents.
* :class:`Checker`: typed field access (objects with a closed set of fields, strings, booleans, bounded
  integers, bounded arrays) reporting ``<source><sep><path>: <what was expected>``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, NoReturn

from .errors import DataFileError

# --------------------------------------------------------------------------------------------------------------
# limits
# --------------------------------------------------------------------------------------------------------------

MAX_JSON_BYTES = 32 * 1024 * 1024  # a state document is ~30 kB, a map ~50 kB
MAX_JSON_DEPTH = 32  # the deepest valid document (a state inside its wrapper) nests 5 levels
MAX_INT_DIGITS = 15  # every integer the engine reads is far below 10**15
MAX_CELL = 1_000  # map cell coordinates: rendering walks rows x columns


# --------------------------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------------------------

class _JsonLimit(Exception):
    """Raised inside the JSON decoder's hooks; turned into the caller's error class."""


def _bounded_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > MAX_INT_DIGITS:
        raise _JsonLimit(f"integer with {len(digits)} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _no_constant(text: str) -> NoReturn:
    raise _JsonLimit(f"{text} is not a JSON number")


def _depth_ok(text: str, limit: int) -> bool:
    """Whether brackets (outside strings) nest at most ``limit`` deep: checked before decoding, so a
    pathological document never reaches the recursive decoder."""
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def parse_json(text: str | bytes | bytearray, source: str, error: type[Exception] = DataFileError) -> Any:
    """Decode a JSON document; every problem raises ``error`` with a message starting with ``source``."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > MAX_JSON_BYTES:
            raise error(f"{source}: document of {len(text)} bytes (at most {MAX_JSON_BYTES})")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise error(f"{source}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    if not isinstance(text, str):
        raise error(f"{source}: expected JSON text, got {type(text).__name__}")
    if len(text) > MAX_JSON_BYTES:
        raise error(f"{source}: document of {len(text)} characters (at most {MAX_JSON_BYTES})")
    if not _depth_ok(text, MAX_JSON_DEPTH):
        raise error(f"{source}: nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        return json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise error(f"{source}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except _JsonLimit as e:
        raise error(f"{source}: {e}") from None
    except (RecursionError, ValueError, MemoryError) as e:  # belt and braces: the checks above should catch them
        raise error(f"{source}: cannot decode ({type(e).__name__})") from None


def read_file_bytes(path: str | os.PathLike, error: type[Exception] = DataFileError,
                    max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """A file's first ``max_bytes + 1`` bytes at most (more than ``max_bytes`` tells the caller it is too large);
    every failure raises ``error`` naming the file, in the words every command uses (``PATH: file not found``,
    not Python's ``[Errno 2]``)."""
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except FileNotFoundError:
        raise error(f"{path}: file not found") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not a file") from None
    except OSError as e:
        raise error(f"{path}: cannot read file ({e.strerror or e})") from None
    return data


def read_json_file(path: str | os.PathLike, error: type[Exception] = DataFileError) -> Any:
    """Read and decode a JSON data file; every failure raises ``error`` naming the file (and line)."""
    return parse_json(read_file_bytes(path, error), str(path), error)  # parse_json refuses what is too large


# --------------------------------------------------------------------------------------------------------------
# typed fields
# --------------------------------------------------------------------------------------------------------------

def json_type(v: Any) -> str:
    """Describe a value in JSON words, since the reader edits JSON."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"boolean {json.dumps(v)}"
    if isinstance(v, int):
        text = str(v) if -10**30 < v < 10**30 else f"an integer of {len(str(abs(v)))} digits"
        return f"number {text}"
    if isinstance(v, float):
        return f"number {v!r}"
    if isinstance(v, str):
        return f"string {json.dumps(v)[:60]}"
    if isinstance(v, (list, tuple)):
        return f"array of {len(v)}"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def join(path: str, key: str) -> str:
    """``a.b`` (or ``b`` at the top); indices are appended by callers as ``[i]``."""
    return f"{path}.{key}" if path else key


class Checker:
    """Raises ``error`` with ``<source><sep><field path>: <expectation>`` messages.

    Data files use ``Checker("basic.json")`` (``basic.json: army[2].red: ...``); states use
    ``Checker("state", StateError, sep=".")`` (``state.won[3][2]: ...``).
    """

    def __init__(self, source: str, error: type[Exception] = DataFileError, sep: str = ": ") -> None:
        self.source, self.error, self.sep = source, error, sep

    def fail(self, path: str, message: str) -> NoReturn:
        raise self.error(f"{self.source}{self.sep}{path}: {message}" if path else f"{self.source}: {message}")

    def obj(self, v: Any, path: str, allowed: Iterable[str], required: Iterable[str] = ()) -> dict[str, Any]:
        """An object whose fields are all in ``allowed`` (a misspelt field is an error, not ignored)."""
        if not isinstance(v, dict):
            self.fail(path or "top level", f"expected an object, got {json_type(v)}")
        allowed = tuple(allowed)
        for key in v:
            if key not in allowed:
                shown = key if isinstance(key, str) and key.isidentifier() else json.dumps(str(key)[:40])
                self.fail(join(path, shown), f"unknown field (expected one of {', '.join(allowed)})")
        for key in required:
            if key not in v:
                self.fail(join(path, key), "missing required field")
        return v

    def string(self, v: Any, path: str, nonempty: bool = True, max_len: int = 10_000) -> str:
        if not isinstance(v, str) or (nonempty and not v.strip()):
            self.fail(path, f"expected a non-empty string, got {json_type(v)}")
        if len(v) > max_len:
            self.fail(path, f"expected at most {max_len} characters, got {len(v)}")
        return v

    def boolean(self, v: Any, path: str) -> bool:
        if not isinstance(v, bool):
            self.fail(path, f"expected true or false, got {json_type(v)}")
        return v

    def integer(self, v: Any, path: str, lo: int | None = None, hi: int | None = None) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or (lo is not None and v < lo) or (hi is not None and v > hi):
            if lo is None and hi is None:
                self.fail(path, f"expected an integer, got {json_type(v)}")
            bounds = f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
            self.fail(path, f"expected an integer in {bounds}, got {json_type(v)}")
        return v

    def array(self, v: Any, path: str, nonempty: bool = False, length: int | None = None,
              max_len: int | None = None) -> list[Any]:
        if not isinstance(v, list):
            self.fail(path, f"expected an array, got {json_type(v)}")
        if nonempty and not v:
            self.fail(path, "expected a non-empty array")
        if length is not None and len(v) != length:
            self.fail(path, f"expected an array of {length} items, got {len(v)}")
        if max_len is not None and len(v) > max_len:
            self.fail(path, f"expected at most {max_len} items, got {len(v)}")
        return v

    def fmt(self, d: dict[str, Any], expected: str) -> None:
        if d.get("format") != expected:
            self.fail("format", f"expected {json.dumps(expected)}, got {json_type(d.get('format'))}")

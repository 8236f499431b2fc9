"""Client input echoed into errors and logs, bounded: one helper for every room (the wire, the matches).

A server names the field a bad request got wrong and says what it got, but never copies the client's input
whole: an id of 500,000 characters echoed into a status message passes gRPC's metadata limit (the client then
sees ``RESOURCE_EXHAUSTED`` "received metadata size exceeds hard limit" instead of the real status), and written
into a log line makes that line as long. :func:`quoted` keeps the first :data:`QUOTE_CAP` characters, marks the
cut and says the original length; :func:`bounded` cuts any text (a whole message, a log field) the same way.
"""

from __future__ import annotations

from typing import Any

QUOTE_CAP = 64  # characters of client input echoed in an error or a log field
MESSAGE_CAP = 1000  # characters of a status message (gRPC details travel in metadata, capped at ~16 KiB)
LOG_FIELD_CAP = 256  # characters of one text field of a call's log line
LOG_LINE_CAP = 8192  # characters of one log line (a last resort: the fields are bounded first)


def quoted(value: Any, cap: int = QUOTE_CAP) -> str:
    """``value`` quoted as Python's ``repr`` quotes a string, at most ``cap`` characters of it: a longer one is
    cut, marked with ``…`` and followed by its length, e.g. ``'xxxxxxxx…' (20000 characters)``."""
    if isinstance(value, (bytes, bytearray)):
        n, text = len(value), bytes(value[:cap]).decode("utf-8", "replace")
        return f"{text!r}… ({n} bytes)" if n > cap else repr(text)
    text = value if isinstance(value, str) else str(value)
    if len(text) <= cap:
        return repr(text)
    return f"{text[:cap]!r}… ({len(text)} characters)"


def bounded(text: str, cap: int = MESSAGE_CAP) -> str:
    """``text`` whole if it has at most ``cap`` characters, else its start, ``…`` and the original length."""
    if len(text) <= cap:
        return text
    tail = f"… ({len(text)} characters)"
    return text[:max(cap - len(tail), 0)] + tail

"""Forwarding a caller's cancel ``threading.Event`` to a flag the search loop can read.

The search loops (the C tree with the GIL released, or worker processes) cannot wait on a Python Event, so a
small daemon thread polls it and sets their own flag; the context manager stops the thread on exit.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Callable, Iterator


@contextlib.contextmanager
def forward_cancel(cancel: threading.Event | None, set_flag: Callable[[], None],
                   period: float = 0.002) -> Iterator[None]:
    """While the block runs, call ``set_flag()`` within ``period`` seconds of ``cancel`` being set."""
    if cancel is None:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if cancel.is_set():
                set_flag()
                return
            done.wait(period)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()

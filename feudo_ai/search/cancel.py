"""Forwarding a caller's cancel ``threading.Event`` to a flag the search loop can read.

The search loops (the C tree with the GIL released, or worker processes) cannot wait on a Python Event. A
:class:`CancelEvent` (an Event that calls its listeners when set) forwards at once, with no thread: the Advisor
service uses it, since a polling thread per search wakes every few milliseconds and takes the GIL each time,
which under many concurrent searches delays everything else the server does. A plain ``threading.Event`` is
watched by a small daemon thread that polls it; the context manager stops the thread on exit.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Callable, Iterator


class CancelEvent(threading.Event):
    """A ``threading.Event`` that also calls listeners when it is set (each at most once, in the setter's thread;
    a listener added after the event is set is called at once). Listeners must be quick and must not raise."""

    def __init__(self) -> None:
        super().__init__()
        self._listeners: list[Callable[[], None]] = []
        self._listeners_lock = threading.Lock()

    def set(self) -> None:
        with self._listeners_lock:
            super().set()
            listeners, self._listeners = self._listeners, []
        for fn in listeners:
            fn()

    def add_listener(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn()`` when the event is set (now if it is); returns a function that removes the listener."""
        with self._listeners_lock:
            if not self.is_set():
                self._listeners.append(fn)
                return lambda: self._remove(fn)
        fn()
        return lambda: None

    def _remove(self, fn: Callable[[], None]) -> None:
        with self._listeners_lock:
            try:
                self._listeners.remove(fn)
            except ValueError:  # already called
                pass


@contextlib.contextmanager
def forward_cancel(cancel: threading.Event | None, set_flag: Callable[[], None],
                   period: float = 0.002) -> Iterator[None]:
    """While the block runs, call ``set_flag()`` when ``cancel`` is set: at once for a :class:`CancelEvent`,
    within ``period`` seconds for another ``threading.Event`` (polled by a daemon thread)."""
    if cancel is None:
        yield
        return
    if isinstance(cancel, CancelEvent):
        remove = cancel.add_listener(set_flag)
        try:
            yield
        finally:
            remove()
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

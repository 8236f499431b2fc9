"""A throwaway PostgreSQL server for tests and benchmarks: ``initdb`` into a temporary directory, ``pg_ctl start`` on a
free loopback port (no Unix socket), torn down with its directory at the end. No mock: the real server.

Run as root, PostgreSQL refuses to start, so the server runs as the ``postgres`` OS user (``runuser``), the data
directory owned by it. The binaries are looked up on ``PATH``, then in ``/usr/lib/postgresql/*/bin``; if they are
missing, :class:`PostgresMissing` says how to install them (``apt-get install postgresql``; ``.ci/run`` does).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid

RUN_AS = "postgres"  # the OS user the server runs as when this process is root


class PostgresMissing(RuntimeError):
    pass


def _bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    raise PostgresMissing(f"PostgreSQL's {name} was not found (on PATH or in /usr/lib/postgresql/*/bin): install "
                          f"it (apt-get install postgresql); the PostgreSQL tests need a real server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """A PostgreSQL server of its own: :meth:`url` of a database on it, :meth:`new_database`, :meth:`stop`.
    ``durable=False`` turns fsync off (tests); benchmarks keep PostgreSQL's defaults."""

    def __init__(self, durable: bool = False):
        initdb, self._pg_ctl = _bin("initdb"), _bin("pg_ctl")
        self.root = tempfile.mkdtemp(prefix="feudo-pg-")
        os.chmod(self.root, 0o755)
        self.data = os.path.join(self.root, "data")
        self.logfile = os.path.join(self.root, "server.log")
        self._prefix: list[str] = []
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam(RUN_AS)
            except KeyError:
                raise PostgresMissing(f"running as root and there is no {RUN_AS!r} OS user to run PostgreSQL as "
                                      f"(apt-get install postgresql creates it)") from None
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self._prefix = ["runuser", "-u", RUN_AS, "--"]
        self.port = _free_port()
        self._run([initdb, "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale"])
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
                   f"-c max_connections=200" + ("" if durable else " -c fsync=off -c synchronous_commit=off"))
        self._run([self._pg_ctl, "start", "-w", "-t", "60", "-D", self.data, "-l", self.logfile, "-o", options])
        self.stopped = False

    def _run(self, cmd: list[str]) -> None:
        done = subprocess.run(self._prefix + cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = open(self.logfile).read()[-2000:] if os.path.exists(self.logfile) else ""
            raise RuntimeError(f"{' '.join(cmd[:2])} failed ({done.returncode}): {done.stderr.strip()}\n{log}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """The URL of a new empty database on this server."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        try:
            self._run([self._pg_ctl, "stop", "-D", self.data, "-m", "immediate", "-w", "-t", "30"])
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "PostgresServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def wait_until(predicate, timeout: float, what: str = "", every: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(every)

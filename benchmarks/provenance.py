"""Where a benchmark's JSON comes from: every results file a benchmark writes or prints carries

    "provenance": {"commit": <git rev-parse HEAD>, "dirty": <uncommitted changes to tracked files?>,
                   "command": "python benchmarks/...", "argv": [...], "options": {...}}

``options`` are the resolved options of the run (the parsed arguments with their defaults filled in, and whatever
the benchmark adds: each bot's search options, each mode's ``SearchOptions``); a strength run also records each
pairing's ``a_options`` and ``b_options`` next to its figures. Files committed before this existed were given
``provenance`` afterwards, marked ``"backfilled": true`` (see docs/search-history.md, "Provenance of the results
files"): their commit is the one that added the file, their command the one the docs state, null where none does.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIELDS = ("commit", "dirty", "command", "argv", "options")


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _plain(value):
    """``value`` as JSON can hold it (tuples as lists, other objects by ``to_dict()`` or ``str``)."""
    if isinstance(value, argparse.Namespace):
        value = vars(value)
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def provenance(options=None, argv: list[str] | None = None) -> dict:
    """The provenance of a run of this process: the checkout's commit (None outside a git checkout) and whether
    tracked files differ from it, the command line (``sys.argv`` unless ``argv`` is given) and ``options`` (an
    ``argparse.Namespace`` or a dict, made JSON-plain)."""
    argv = list(sys.argv if argv is None else argv)
    head = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": head.strip() if head else None, "dirty": bool(status.strip()) if status is not None else None,
            "command": shlex.join(["python", *argv]), "argv": argv, "options": _plain(options or {})}


def with_provenance(result: dict, options=None, argv: list[str] | None = None) -> dict:
    """``result`` with its ``provenance`` (see :func:`provenance`) added; returns the same dict."""
    result["provenance"] = provenance(options, argv)
    return result


def print_result(result: dict, args: argparse.Namespace) -> None:
    """Print a benchmark's ``result``: one JSON object with its provenance (the run's ``args`` as its options)
    when ``args.json`` is set, else a table of its fields, one a line."""
    if args.json:
        print(json.dumps(with_provenance(result, {"args": args})))
    else:
        for k, v in result.items():
            print(f"{k:32s} {v}")


def backfilled(commit: str, command: str | None) -> dict:
    """The provenance of a results file committed before benchmarks recorded it: ``commit`` is the one that added
    the file (found with ``git log --diff-filter=A``), ``command`` the one the docs state (None where they do not);
    what was not recorded is None, and ``backfilled`` says so."""
    return {"commit": commit, "dirty": None, "command": command, "argv": None, "options": None, "backfilled": True,
            "commit_is": "the commit that added the file", "command_is": "as the docs state it" if command else None}


def main(argv: list[str] | None = None) -> int:
    """``python benchmarks/provenance.py --commit C [--command CMD] FILE...``: backfill (or, run again, check) the
    provenance of results files, as ``record_options.py`` does for their options: a file that has provenance
    already is compared, never overwritten (exit 2 naming the file if it differs; nothing is written then)."""
    import json

    ap = argparse.ArgumentParser(description=main.__doc__.split("\n")[0])
    ap.add_argument("--commit", required=True, help="the commit that added the files (git log --diff-filter=A)")
    ap.add_argument("--command", default=None, help="the command that produced them, as the docs state it")
    ap.add_argument("files", nargs="+", metavar="FILE")
    args = ap.parse_args(argv)
    full = _git("rev-parse", "--verify", "--quiet", f"{args.commit}^{{commit}}")
    if not full:
        ap.error(f"--commit: {args.commit!r} is not a commit of this repository")
    record = backfilled(full.strip(), args.command)
    todo = []
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
        if not isinstance(summary, dict):
            ap.error(f"{path}: expected a JSON object")
        if "provenance" in summary:
            if summary["provenance"] != record:
                ap.error(f"{path}: provenance: the file has {summary['provenance']!r}, here {record!r}")
            print(f"{path}: checked")
        else:
            todo.append((path, {**summary, "provenance": record}))
    for path, summary in todo:
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(summary, indent=2) + "\n")
        print(f"{path}: provenance backfilled, commit {record['commit'][:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Record, in strength runs made before ``benchmarks/strength.py`` recorded them, the search options each side
played with (``a_options``, ``b_options``), as the code of the run's own commit resolves them, so that
``strength.py --pool`` can hold those runs against newer ones (it refuses to pool runs with and without options).

    python benchmarks/record_options.py --commit 2ff8132 benchmarks/results/2p_pairings_to_the_end_seed7100_games32.json

The code of COMMIT (``git archive``) is laid out in a temporary directory with this checkout's compiled extensions
copied in. That is only right if the extensions' sources (``.pyx``, ``.pxd``, ``setup.py``) are
the same at COMMIT as in this checkout: checked, and refused otherwise (build that commit and record from there).
There each pairing's bots are made and asked for their options in a game of the pairing's players, as
:func:`strength.played_options` does today (``options_for``; ``options`` in code older than it, whose horizon did
not follow the players; none for a bot that does not search). Each pairing it fills also gets ``"options_from":
COMMIT`` (the full hash). A pairing that already has options is compared, never overwritten: a difference is an
error naming the file, the pairing and the fields, so running it again checks the record. With ``--only``, just
the pairings whose name contains one of its texts (a file may hold pairings that are pooled with runs of other
code). Exit 0 when every file is recorded or checked, 2 on an error (nothing is written then).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from strength import _options_differ  # benchmarks/ is sys.path[0] when this script runs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# what the compiled extensions are built from: equal at the commit and here, or the copied extensions are not its
EXTENSION_SOURCES = ("*.pyx", "*.pxd", "setup.py")

# Run inside the laid-out tree (argv: the tree, then a JSON list of [spec, players]); prints a JSON list of the
# options dicts (or null). It refuses to run on modules imported from anywhere but the tree.
_RESOLVE = r"""
import json, os, sys
tree = sys.argv[1]
sys.path.insert(0, tree)
import feudo_ai
from feudo_ai.bots import make_bot
if not os.path.abspath(feudo_ai.__file__).startswith(os.path.abspath(tree) + os.sep):
    sys.exit(f"feudo_ai was imported from {feudo_ai.__file__}, not from the commit's tree")
out = []
for spec, players in json.loads(sys.argv[2]):
    bot = make_bot(spec, 0)
    options_for = getattr(bot, "options_for", None)
    options = options_for(players) if options_for is not None else getattr(bot, "options", None)
    out.append(options.to_dict() if options is not None else None)
print(json.dumps(out))
"""


class RecordError(ValueError):
    """A file, commit or pairing whose options cannot be recorded (the message names it)."""


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RecordError(f"git {' '.join(args)}: {done.stderr.strip() or 'failed'}")
    return done.stdout


def resolve_commit(commit: str) -> str:
    """The full hash of ``commit``.

    :raises RecordError: if it names no commit of this repository, or its extension sources differ from this
        checkout's (the copied extensions would not be its own)."""
    try:
        full = _git("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").strip()
    except RecordError:
        raise RecordError(f"--commit: {commit!r} is not a commit of this repository") from None
    changed = _git("diff", "--name-only", full, "--", *EXTENSION_SOURCES).split()
    if changed:
        raise RecordError(f"--commit: the compiled extensions' sources differ between {commit} and this checkout "
                          f"({', '.join(changed[:5])}{', ...' if len(changed) > 5 else ''}): build that commit and "
                          f"record from there")
    return full


def options_at(commit: str, games: list[tuple[str, int]]) -> list[dict | None]:
    """The search options of each ``(spec, players)`` as the code of ``commit`` resolves them (see the module
    docstring), in a temporary tree of that commit with this checkout's compiled extensions.

    :raises RecordError: if the tree cannot be laid out or a bot cannot be made there."""
    with tempfile.TemporaryDirectory(prefix="feudo-options-") as tree:
        archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=ROOT, capture_output=True)
        if archive.returncode != 0:
            raise RecordError(f"git archive {commit}: {archive.stderr.decode(errors='replace').strip()}")
        subprocess.run(["tar", "-x", "-C", tree], input=archive.stdout, check=True)
        built = [p for pattern in ("engine/*.so", "feudo_ai/*.so")
                 for p in glob.glob(os.path.join(ROOT, pattern))]
        if not built:
            raise RecordError("this checkout has no compiled extensions: install it first (pip install -e .)")
        for path in built:
            shutil.copy2(path, os.path.join(tree, os.path.relpath(path, ROOT)))
        done = subprocess.run([sys.executable, "-c", _RESOLVE, tree, json.dumps(games)], cwd=tree,
                              capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["failed"])[-1]
            raise RecordError(f"the code of {commit[:12]} could not resolve the bots' options: {last}")
        return json.loads(done.stdout)


def record(path: str, commit: str, only: list[str] | None = None) -> tuple[dict, int, int]:
    """The strength run of ``path`` with each pairing's options as ``commit`` resolves them, and how many
    pairings were filled and how many checked (they had options already, equal to these); with ``only``, just the
    pairings whose name contains one of its texts.

    :raises RecordError: if the file is not a strength run, or a pairing's recorded options differ."""
    try:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
    except OSError as e:
        raise RecordError(f"{path}: {e.strerror or e}") from None
    except ValueError as e:
        raise RecordError(f"{path}: not JSON ({e})") from None
    if not isinstance(summary, dict) or summary.get("benchmark") != "strength" \
            or not isinstance(summary.get("pairings"), list):
        raise RecordError(f"{path}: benchmark: expected a strength run (\"benchmark\": \"strength\", pairings)")
    games, chosen = [], []
    for i, pairing in enumerate(summary["pairings"]):
        for key, kind in (("name", str), ("a", str), ("b", str), ("players", int)):
            if not isinstance(pairing.get(key) if isinstance(pairing, dict) else None, kind):
                raise RecordError(f"{path}: pairings[{i}].{key}: expected {kind.__name__}")
        if not only or any(text in pairing["name"] for text in only):
            chosen.append((i, pairing))
            games += [(pairing["a"], pairing["players"]), (pairing["b"], pairing["players"])]
    if not chosen:
        raise RecordError(f"{path}: no pairing whose name contains any of {only!r}")
    resolved = iter(options_at(commit, games))
    filled = checked = 0
    for i, pairing in chosen:
        found = {key: next(resolved) for key in ("a_options", "b_options")}
        if "a_options" in pairing or "b_options" in pairing:
            for key, value in found.items():
                if pairing.get(key) != value:
                    # the earlier side is the file's record, "here" the commit's code
                    raise RecordError(f"{path}: pairings[{i}].{key}: {pairing['name']!r} (the file against "
                                      f"{commit[:12]}) " + _options_differ(pairing.get(key), value))
            checked += 1
        else:
            pairing.update(found, options_from=commit)
            filled += 1
    return summary, filled, checked


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commit", required=True, help="the commit whose code played the runs")
    ap.add_argument("--only", action="append", default=None, metavar="TEXT",
                    help="just the pairings whose name contains this text (repeatable: any of them)")
    ap.add_argument("files", nargs="+", metavar="FILE", help="strength runs (strength.py --json output)")
    args = ap.parse_args(argv)
    try:
        commit = resolve_commit(args.commit)
        results = [(path, *record(path, commit, args.only)) for path in args.files]
    except RecordError as e:
        ap.error(str(e))
    for path, summary, filled, checked in results:  # written only once every file was read and resolved
        if filled:
            with open(path, "w", encoding="utf-8") as f:
                f.write(json.dumps(summary, indent=2) + "\n")
        print(f"{path}: {filled} pairing(s) recorded, {checked} checked, options of {commit[:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

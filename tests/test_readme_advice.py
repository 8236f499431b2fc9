"""README's advice example runs as written (issue 10): it builds its position, asks feudo_ai.advise, prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path


def test_readme_advice_example_runs_as_written() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S) if "feudo_ai.advise(" in b]
    assert len(blocks) == 1, "README should hold one feudo_ai.advise example"
    out = io.StringIO()
    scope: dict = {}
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], "README.md", "exec"), scope)  # noqa: S102 - the project's own README
    advice = scope["advice"]
    assert advice.seat == 3 and advice.decision == "selection" and len(advice.plan) == 4
    assert advice.stats.iterations >= 20000 and advice.stats.threads == 2
    assert "seat 3 selection:" in out.getvalue()
    assert 0.0 <= advice.belief(0, "Baron") <= 1.0

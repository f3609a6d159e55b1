"""The README's Python example, run as a newcomer would paste it: what its comments say is what
the code gives (it once promised ``supported (50,)`` for a store that held no 50)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from vigente.kernel.answer import Interpretation, Status

README = Path(__file__).resolve().parent.parent / "README.md"


def _example() -> str:
    section = README.read_text(encoding="utf-8").split("## Python API", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "the README's Python API section has no python block"
    return match.group(1)


def test_the_python_example_gives_what_its_comments_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the example opens "limits.db" where it runs
    code = _example()
    namespace: dict[str, Any] = {}
    exec(compile(code, str(README), "exec"), namespace)
    e = namespace["e"]
    assert "# Status.SUPPORTED, (50,), Interpretation.KNOWN_THEN" in code
    assert (e.status, e.values, e.interpretation) == (
        Status.SUPPORTED,
        (50,),
        Interpretation.KNOWN_THEN,
    )
    assert e.excluded == ()  # nothing learned after k shows in an answer as known at k
    reasons = {(x.version.value, x.reason.value) for x in namespace["later"].excluded}
    assert (80, "not_yet_valid") in reasons
    promised = re.search(r'it\.statement  # "(.*?) …"', code)
    assert promised, "the example's Italian statement comment changed shape"
    assert namespace["it"].statement.startswith(promised.group(1))

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


def _cli_block() -> tuple[list[list[str]], list[str]]:
    """The README's CLI block as commands (optional ``[…]`` parts and comments left out), and
    the import file its JSON block shows."""
    section = README.read_text(encoding="utf-8").split("## CLI", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    lines = re.search(r"```json\n(.*?)```", section, re.DOTALL)
    assert block and lines, "the README's CLI section has no sh block or no json block"
    text = re.sub(r"\\\n\s*", " ", block.group(1))
    commands = []
    for line in text.splitlines():
        line = re.sub(r"\s*\[[^\]]*\]", "", line.split("#", 1)[0]).strip()
        if line:
            commands.append(line.split()[1:])  # without "vigente"
    statements = [s for s in re.sub(r",\n\s+", ", ", lines.group(1)).splitlines() if s.strip()]
    return commands, statements


def test_the_cli_block_runs_in_the_order_written(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Facts, an import, a plain ask, a retraction and a precedence rule dated in the past: an
    ask as known now fixes nothing, so the back-dated writes after it are taken (and recorded as
    backfills, which the block's last command lists)."""
    from click.testing import CliRunner

    from vigente.cli import cli

    monkeypatch.chdir(tmp_path)
    commands, statements = _cli_block()
    (tmp_path / "events.jsonl").write_text("\n".join(statements) + "\n", encoding="utf-8")
    assert [c[2] for c in commands if c[0] == "--db"][:4] == ["record", "import", "ask", "retract"]
    runner = CliRunner()
    for args in commands:
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, (args, result.output)
    listed = runner.invoke(cli, ["--db", "limits.db", "backfills", "--json"])
    assert "back-dated" in listed.output

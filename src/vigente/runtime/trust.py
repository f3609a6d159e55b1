"""What may enter a model's system text from the runtime log (DESIGN.md, invariant 10).

System text carries instructions, so it comes only from trusted writers: the conversation's
own ``system`` messages and the runtime's skill state. Even a trusted writer's skill state
reaches the system text only as *names* — a skill, a tool, a profile — never as free text,
so a name is checked against :data:`NAME` when it is recorded, and a name that does not match
(a record written before the check) is quoted as JSON data when it is rendered.

The pattern follows the names the providers and the skill format already allow: OpenAI's
function names (``^[a-zA-Z0-9_-]{1,64}$``, platform.openai.com/docs/api-reference/chat
``tools[].function.name``), Anthropic's tool names (``^[a-zA-Z0-9_-]{1,64}$``) and the Agent
Skills ``name`` field (lowercase letters, digits and hyphens, at most 64 characters,
agentskills.io/specification), plus ``.``, ``:`` and ``/`` for namespaced names
(``server/tool``). No space, quote, bracket or newline: a name cannot be a sentence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from vigente.errors import InvalidInput

__all__ = ["NAME", "check_names", "quoted_name"]

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}")


def check_names(what: str, names: Sequence[str]) -> tuple[str, ...]:
    """``names`` when each is a plain name (:data:`NAME`), else :class:`InvalidInput`."""
    for name in names:
        if not NAME.fullmatch(name):
            raise InvalidInput(
                f"{what} {json.dumps(name, ensure_ascii=False)[:80]} is not a plain name: it goes "
                "into the model's system text, so it must be 1-64 letters, digits, _ . : / or -, "
                "starting with a letter or digit (no spaces, quotes or newlines); put free text "
                "in a message instead")
    return tuple(names)


def quoted_name(name: str) -> str:
    """A name as it goes into system text: as it is when plain, else quoted as JSON data."""
    return name if NAME.fullmatch(name) else json.dumps(name, ensure_ascii=True)

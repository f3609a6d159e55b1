"""Who said a message: its ``speaker``, a display name (as OpenAI's ``name``), for when several
people share a role — a group chat, a customer and a colleague on one ticket.

A speaker is a name, never a sentence: it reaches the model beside what was said (a request's
``name`` field, or a short ``[Ana]:`` prefix where a format has none), so it is checked when it
is recorded, whoever writes it. Trimmed of surrounding spaces, it must be 1 to
:data:`MAX_SPEAKER_CHARS` characters with no control or format character (no newline, tab,
bidirectional override, zero-width space: nothing that could start a new line of the request or
hide what it says) and must not be a role's name (``system``, ``assistant`` …): a role says
what a message is, a speaker says which person said it.
"""

from __future__ import annotations

import json
import unicodedata

from vigente.errors import InvalidInput

__all__ = ["MAX_SPEAKER_CHARS", "ROLE_NAMES", "check_speaker"]

#: The longest speaker kept, in characters (a display name, not a text).
MAX_SPEAKER_CHARS = 100
#: Names a speaker may not take (compared case-insensitively): the roles of the request
#: formats vigente writes and reads, so that no speaker reads as a role.
ROLE_NAMES = frozenset({"system", "developer", "user", "assistant", "tool", "function",
                        "model", "human", "ai"})
# format characters a name may hold: the zero-width (non-)joiners some scripts and emoji need
_JOINERS = frozenset({"\u200c", "\u200d"})
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _shown(value: str) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + '..."'


def check_speaker(value: object) -> str | None:
    """``value`` as a message's speaker, trimmed (None stays None), else
    :class:`InvalidInput` saying what to fix."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"speaker must be a string (a display name), got "
                           f"{type(value).__name__}")
    name = value.strip()
    if not name:
        raise InvalidInput("speaker is empty: give the display name of who said it, or leave "
                           "it out")
    if len(name) > MAX_SPEAKER_CHARS:
        raise InvalidInput(f"speaker is {len(name)} characters long: a speaker is a display "
                           f"name of at most {MAX_SPEAKER_CHARS} characters")
    for ch in name:
        if ch not in _JOINERS and unicodedata.category(ch) in _REFUSED_CATEGORIES:
            raise InvalidInput(
                f"speaker {_shown(name)} holds a control or format character "
                f"(U+{ord(ch):04X}): a speaker is one line of plain text, with no newline, tab "
                "or invisible character; put what was said in the content")
    if name.casefold() in ROLE_NAMES:
        raise InvalidInput(
            f"speaker {_shown(name)} is a role's name: the role already says what the message "
            "is; give the person's display name, or leave speaker out")
    return name

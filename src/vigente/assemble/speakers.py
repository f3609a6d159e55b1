"""How a request says who said a message (its ``speaker``), in each provider's own way.

OpenAI Chat Completions and LangChain messages have a ``name`` field: the speaker goes there,
as a name the API accepts (OpenAI's pattern ``^[a-zA-Z0-9_-]{1,64}$``, which langchain-openai
passes on as it is): :func:`wire_name` maps a display name to one deterministically ("Ana
María" → ``Ana_Maria``). Anthropic Messages and OpenAI Responses input items have no such
field: the speaker is a short prefix of the text the model reads, ``[Ana María]: …``
(:func:`speaker_prefix`), so its tokens are counted like any other text of the request. A name
nothing of which survives the mapping (a name in a script with no Latin letters) is written as
the prefix in every format, so that the model can still read it.

A speaker is checked when it is recorded (runtime/speakers.py: one line, no control character,
not a role's name); a prefix quotes one that holds anything but letters, digits, spaces and
``. ' - _`` as a JSON string, so no speaker can close the label early and write text of its own
beside it.
"""

from __future__ import annotations

import json
import re
import unicodedata

__all__ = ["NAMED_FORMATS", "speaker_label", "speaker_prefix", "spoken", "wire_name"]

#: The request formats whose messages carry a ``name`` field.
NAMED_FORMATS = frozenset({"openai-chat", "langchain"})

_NOT_WIRE = re.compile(r"[^A-Za-z0-9_-]+")
_PLAIN = re.compile(r"[\w .'’-]+")


def wire_name(speaker: str) -> str | None:
    """``speaker`` as a name OpenAI's ``name`` field accepts: accents dropped (NFKD), every
    run of other characters one ``_``, at most 64 characters; None when no letter or digit of
    it survives."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", speaker)
                     if not unicodedata.combining(c))
    name = _NOT_WIRE.sub("_", folded).strip("_")[:64].rstrip("_")
    return name if re.search(r"[A-Za-z0-9]", name) else None


def speaker_label(speaker: str) -> str:
    """``speaker`` as it is written inside a label: as it is when it holds only letters,
    digits, spaces and ``. ' - _``, else as a JSON string (brackets, colons, quotes)."""
    return speaker if _PLAIN.fullmatch(speaker) else json.dumps(speaker, ensure_ascii=False)


def speaker_prefix(speaker: str) -> str:
    """The label before what ``speaker`` said, where a format has no ``name`` field:
    ``[Ana]: ``."""
    return f"[{speaker_label(speaker)}]: "


def spoken(text: str, speaker: str | None, fmt: str) -> tuple[str, str]:
    """``(text, name)`` of a message ``speaker`` said, in format ``fmt``: the text as it is and
    the speaker for the ``name`` field where the format has one and the name survives
    :func:`wire_name`; else the text with :func:`speaker_prefix` before it and no name."""
    if not speaker:
        return text, ""
    if fmt in NAMED_FORMATS and wire_name(speaker) is not None:
        return text, speaker
    return speaker_prefix(speaker) + text, ""

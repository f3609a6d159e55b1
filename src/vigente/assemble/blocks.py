"""The neutral request blocks the pipeline produces and every serializer reads.

``system`` blocks carry instructions only (the conversation's system messages and the
runtime's own skill state); everything that came from a tool, a retrieved document, a memory
derived from them or another participant is a ``user``-position ``data`` block or the result
half of an ``exchange`` — never a system block (the untrusted-content rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Block"]


@dataclass(frozen=True, slots=True)
class Block:
    """One element of a request: ``system``, ``user``, ``assistant``, ``data`` (untrusted
    content quoted in a user position) or ``exchange`` (a tool call and its result).
    ``group``: the model run that produced an ``assistant`` text or an ``exchange``'s call —
    consecutive blocks of one run are one model turn (its text and its parallel calls), and a
    serializer writes them as the one assistant message the model produced."""

    kind: str
    text: str = ""
    ref: str = ""
    call_id: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False
    group: str = ""

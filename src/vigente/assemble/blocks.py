"""The neutral request blocks the pipeline produces and every serializer reads.

``system`` blocks carry instructions only (the conversation's system messages and the
runtime's own skill state); everything that came from a tool, a retrieved document, a memory
derived from them or another participant is a ``user``-position ``data`` block or the result
half of an ``exchange`` — never a system block (the untrusted-content rule).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Block", "digest"]


@dataclass(frozen=True, slots=True)
class Block:
    """One element of a request: ``system``, ``user``, ``assistant``, ``data`` (untrusted
    content quoted in a user position) or ``exchange`` (a tool call and its result).
    ``group``: the model run that produced an ``assistant`` text or an ``exchange``'s call —
    consecutive blocks of one run are one model turn (its text and its parallel calls), and a
    serializer writes them as the one assistant message the model produced. ``speaker``: who
    said a message, for a format's ``name`` field (assemble/speakers.py); where a format has
    none, the renderer already wrote it into ``text`` and leaves this empty."""

    kind: str
    text: str = ""
    ref: str = ""
    call_id: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False
    group: str = ""
    speaker: str = ""


def digest(blocks: Sequence[Block]) -> bytes:
    """A digest of every field of ``blocks``: blocks with the same digest are the same request
    text in every format (a cache key that holds no content)."""
    h = hashlib.sha256()  # (hardware-accelerated where blake2 is not)
    for b in blocks:
        text = b.text if isinstance(b.text, str) else ""
        # the fields but the text as a tuple's repr (it tells JSON values apart: 1, 1.0, True,
        # "1"; arguments in another key order only miss), then the text, whose length it gives
        head: tuple[Any, ...] = (b.kind, b.ref, b.call_id, b.name, b.arguments, b.is_error,
                                 b.group)
        if b.speaker:  # (a block without one digests as it did before speakers)
            head = (*head, b.speaker)
        h.update(repr((head, type(b.text).__name__, len(text))).encode("utf-8", "surrogatepass"))
        h.update(text.encode("utf-8", "surrogatepass"))
    return h.digest()

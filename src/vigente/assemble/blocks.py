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
    serializer writes them as the one assistant message the model produced."""

    kind: str
    text: str = ""
    ref: str = ""
    call_id: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False
    group: str = ""


def digest(blocks: Sequence[Block]) -> bytes:
    """A digest of every field of ``blocks``: blocks with the same digest are the same request
    text in every format (a cache key that holds no content)."""
    h = hashlib.sha256()  # (hardware-accelerated where blake2 is not)
    for b in blocks:
        # repr tells JSON values apart (1, 1.0, True, "1"); another key order only misses
        args = repr(b.arguments)
        for part in (b.kind, b.text, b.ref, b.call_id, b.name, args, b.group):
            if part is None:
                h.update(b"\xff" * 8)
                continue
            data = str(part).encode("utf-8", "surrogatepass")
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
        h.update(b"\x01" if b.is_error else b"\x00")
    return h.digest()

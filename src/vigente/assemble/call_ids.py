"""Short tool-call ids on the wire.

A provider needs a tool call's id only to pair the call with its result inside one request; the
ids an agent framework mints (``call_`` and 24 random characters from OpenAI, ``toolu_01…`` from
Anthropic) cost 15–20 tokens each, and a request carries each twice. Under ``call_ids =
"short"`` such an id goes as ``c<seq>``, the call's place in its conversation's log: the same
call has the same wire id in every request and every format (an unchanged prefix stays
byte-identical for a provider's prompt cache, and a model that named the id once finds the
same call later), and the id is valid everywhere (Anthropic allows only ``[A-Za-z0-9_-]``).
An id already as short as that (at most :data:`KEEP_CHARS` of those characters: the ids an
application chose, ``open2``) goes as it is. The record keeps which call each wire id stands
for (``call_ids``), and the framework integrations give the framework's own ids back.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from vigente.assemble.blocks import Block

__all__ = ["CALL_IDS", "KEEP_CHARS", "short_call_ids", "wire_id", "with_wire_ids"]

CALL_IDS = ("short", "original")
KEEP_CHARS = 8
_SAFE = re.compile(r"[A-Za-z0-9_-]+")


def wire_id(call_id: str, seq: int) -> str:
    """The id a call goes by on the wire: its own when short and safe, else ``c<seq>``."""
    if len(call_id) <= KEEP_CHARS and _SAFE.fullmatch(call_id):
        return call_id
    return f"c{seq}"


def with_wire_ids(blocks: list[Block], seqs: Mapping[str, int]) -> list[Block]:
    """``blocks`` with each exchange's call id as :func:`wire_id` gives it (``seqs``: each
    call's place in the conversation's log, by call id)."""
    return [
        dataclasses.replace(b, call_id=wire_id(b.call_id, seqs[b.call_id]))
        if b.kind == "exchange" and b.call_id in seqs
        else b
        for b in blocks
    ]


def short_call_ids(
    blocks: list[Block], seqs: Mapping[str, int]
) -> tuple[list[Block], dict[str, str]]:
    """A request's blocks with their wire ids, and the map from each changed wire id to the
    call's own id. A generated id that an application's own short id already takes in the
    same request gets ``_`` appended until it is free."""
    kept = {
        b.call_id
        for b in blocks
        if b.kind == "exchange"
        and b.call_id in seqs
        and wire_id(b.call_id, seqs[b.call_id]) == b.call_id
    }
    given: dict[str, str] = {}  # call id -> wire id
    out: list[Block] = []
    for b in blocks:
        if b.kind == "exchange" and b.call_id in seqs:
            wire = given.get(b.call_id)
            if wire is None:
                wire = wire_id(b.call_id, seqs[b.call_id])
                if wire != b.call_id:
                    while wire in kept or wire in given.values():
                        wire += "_"
                given[b.call_id] = wire
            b = dataclasses.replace(b, call_id=wire)
        out.append(b)
    return out, {wire: call for call, wire in given.items() if wire != call}

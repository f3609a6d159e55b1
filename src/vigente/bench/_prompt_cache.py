"""What a sequence of requests costs under two providers' published prompt-cache rules.

Costs are in base-input-token equivalents (tokens times the price multiplier), so a model's
price per token cancels and a method's cost compares with another's directly.

* **OpenAI, automatic prefix caching** (:data:`OPENAI_GPT4O`): a request of 1,024 tokens or
  more reuses the longest prefix it shares with an earlier request, in steps of 128 tokens from
  1,024; cached input is billed at 0.5 of the input price for gpt-4o (the model that recorded
  the tau-bench sessions), nothing extra for writing.
* **Anthropic, cache breakpoints** (:data:`ANTHROPIC_SONNET`): two of the four breakpoints a
  request may carry, one after the system text (it never changes) and one on the request's
  last block (automatic caching's place, moving forward as the conversation grows); the request
  reads the longest earlier entry that is a prefix of it at a breakpoint or a block boundary at
  most 20 blocks before the last one, at 0.1; everything after it is written at 1.25 (5-minute
  TTL); a prompt under 1,024 tokens (Sonnet, Opus 4/4.1) is not cached and goes at 1.0.

The sources of these rules are cited in docs/benchmarks.md. A block here is one message (a
tool result is one block either way; an assistant message with one tool call is one or two).
The TTL is taken not to lapse within a session (tau-bench records no times; a call follows the
previous one within seconds) and no cache is shared between sessions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ANTHROPIC_SONNET",
    "OPENAI_GPT4O",
    "PROVIDERS",
    "AnthropicCache",
    "CacheRules",
    "OpenAICache",
    "common_prefix",
    "message_token_ids",
    "new_cache",
]

#: Stand-in ids for the 3 tokens per message that count_message_tokens adds (role markers).
_MESSAGE_MARK = [-1, -1, -1]


@dataclass(frozen=True, slots=True)
class CacheRules:
    """One provider's prompt-cache billing rules (multipliers of the base input price)."""

    name: str
    min_tokens: int
    read: float
    write: float
    step: int = 1
    lookback_blocks: int | None = None


OPENAI_GPT4O = CacheRules("openai", min_tokens=1024, read=0.5, write=1.0, step=128)
ANTHROPIC_SONNET = CacheRules(
    "anthropic", min_tokens=1024, read=0.1, write=1.25, lookback_blocks=20
)
PROVIDERS = (OPENAI_GPT4O, ANTHROPIC_SONNET)


def _ids(encode: Callable[[str], list[int]], value: Any) -> list[int]:
    if isinstance(value, str):
        return encode(value)
    if isinstance(value, dict):
        out: list[int] = []
        for k, v in value.items():
            if k != "type":
                out += encode(k)
            out += _ids(encode, v)
        return out
    if isinstance(value, list):
        return [t for v in value for t in _ids(encode, v)]
    if value is None or isinstance(value, bool):
        return []
    return encode(str(value))


def message_token_ids(encode: Callable[[str], list[int]], message: dict[str, Any]) -> list[int]:
    """One message's tokens as :func:`vigente.assemble.count_message_tokens` counts them (its
    length is that count): 3 per message, then every string in order (keys but ``type``)."""
    return _MESSAGE_MARK + _ids(encode, message)


def common_prefix(a: list[int], b: list[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class OpenAICache:
    """One session's requests under OpenAI's automatic prefix caching."""

    def __init__(self, rules: CacheRules = OPENAI_GPT4O) -> None:
        self.rules = rules
        self._seen: list[list[int]] = []

    def bill(self, blocks: list[list[int]], stable: int = 0) -> float:
        """The next request's cost (``blocks``: each message's token ids; ``stable`` is for
        :class:`AnthropicCache`'s signature: OpenAI finds the prefix itself)."""
        r = self.rules
        flat = [t for b in blocks for t in b]
        shared = max((common_prefix(flat, s) for s in self._seen), default=0)
        cached = 0
        if len(flat) >= r.min_tokens and shared >= r.min_tokens:
            cached = r.min_tokens + (shared - r.min_tokens) // r.step * r.step
        self._seen.append(flat)
        return r.read * cached + (len(flat) - cached)


class AnthropicCache:
    """One session's requests under Anthropic's automatic caching (breakpoint on the last
    block)."""

    def __init__(self, rules: CacheRules = ANTHROPIC_SONNET) -> None:
        self.rules = rules
        self._entries: set[bytes] = set()

    def bill(self, blocks: list[list[int]], stable: int = 0) -> float:
        """The next request's cost (``blocks``: each message's token ids; ``stable``: how many
        leading blocks are the system text, with a breakpoint after them when > 0)."""
        r = self.rules
        digest = hashlib.sha256()
        prefixes: list[tuple[bytes, int]] = []  # after each block: its digest, tokens so far
        tokens = 0
        for b in blocks:
            digest.update(repr(b).encode())
            digest.update(b"|")
            tokens += len(b)
            prefixes.append((digest.copy().digest(), tokens))
        if tokens < r.min_tokens or not prefixes:
            return float(tokens)
        lowest = 0 if r.lookback_blocks is None else max(0, len(prefixes) - 1 - r.lookback_blocks)
        read = 0
        for key, upto in reversed(prefixes[lowest:]):
            if key in self._entries:
                read = upto
                break
        if not read and 0 < stable < len(prefixes) and prefixes[stable - 1][0] in self._entries:
            read = prefixes[stable - 1][1]
        self._entries.add(prefixes[-1][0])
        if 0 < stable < len(prefixes) and prefixes[stable - 1][1] >= r.min_tokens:
            self._entries.add(prefixes[stable - 1][0])
        return r.read * read + r.write * (tokens - read)


def new_cache(rules: CacheRules) -> OpenAICache | AnthropicCache:
    """A fresh session's cache under ``rules``."""
    return OpenAICache(rules) if rules.name == "openai" else AnthropicCache(rules)

"""The checks a runtime write makes of its plain arguments before it records anything: a word
from a closed vocabulary, UTF-8 text, a list of strings. Each refusal names the argument."""

from __future__ import annotations

from collections.abc import Sequence

from vigente.errors import InvalidInput

__all__ = ["one_of", "string_list", "utf8_text"]


def one_of(name: str, value: str, allowed: Sequence[str]) -> str:
    """``value``, when it is one of ``allowed``."""
    if value not in allowed:
        raise InvalidInput(f"unknown {name} {value!r}: use one of {', '.join(allowed)}")
    return value


def utf8_text(name: str, value: object) -> str:
    """``value``, when it is a string that encodes as UTF-8."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{name} is not valid UTF-8 text: re-encode it (raw binary output "
                           "belongs in a tool result)") from None
    return value


def string_list(name: str, values: Sequence[str] | None) -> tuple[str, ...]:
    """``values`` as a tuple (none: empty), when it is a list of strings, not one string."""
    if values is None:
        return ()
    if isinstance(values, str) or not all(isinstance(v, str) for v in values):
        raise InvalidInput(f"{name} must be a list of strings")
    return tuple(values)

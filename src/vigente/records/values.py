"""Validated names, scopes and JSON values: the things every write carries."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vigente.errors import InvalidName, InvalidValue
from vigente.jsonlimits import MAX_JSON_DEPTH, JSONTooDeep, check_json_depth, json_depth

__all__ = [
    "JSONValue",
    "MAX_NAME_CHARS",
    "MAX_VALUE_BYTES",
    "Scope",
    "canonical_json",
    "check_name",
    "parse_cli_value",
]

JSONValue = None | bool | int | float | str | list[Any] | dict[str, Any]

MAX_NAME_CHARS = 512
MAX_SCOPE_ENTRIES = 32
MAX_VALUE_BYTES = 1_048_576


def check_name(kind: str, text: object, *, limit: int = MAX_NAME_CHARS) -> str:
    """Return ``text`` if it is a usable lineage/source/scope name, else raise InvalidName."""
    if not isinstance(text, str):
        raise InvalidName(f"{kind} must be a string, got {type(text).__name__}")
    if not text.strip():
        raise InvalidName(f"{kind} is empty: give a non-blank name")
    if len(text) > limit:
        raise InvalidName(f"{kind} is {len(text)} characters long: the limit is {limit}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidName(f"{kind} is not valid UTF-8: re-encode the input as UTF-8") from None
    if "\x00" in text:
        raise InvalidName(f"{kind} contains a NUL character: remove it")
    return text


def canonical_json(value: object) -> str:
    """The one JSON spelling of a value: sorted keys, no spaces, UTF-8, no NaN."""
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise InvalidValue(f"value is not JSON-serialisable ({exc}): use JSON types only") from None
    except RecursionError:
        raise InvalidValue(f"the value nests arrays and objects more than {MAX_JSON_DEPTH} "
                           "levels deep: flatten it, or store the deep part as a string") from None
    if json_depth(text, stop_above=MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise InvalidValue(f"the value nests arrays and objects more than {MAX_JSON_DEPTH} "
                           "levels deep: flatten it, or store the deep part as a string")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidValue("value is not valid UTF-8: re-encode the input as UTF-8") from None
    if size > MAX_VALUE_BYTES:
        raise InvalidValue(
            f"value is {size} bytes as JSON: the limit is {MAX_VALUE_BYTES}; store large "
            "documents as artifacts and record a reference"
        )
    return text


def parse_cli_value(text: str) -> JSONValue:
    """A CLI VALUE: parsed as JSON when it is valid JSON, else taken as a string."""
    try:
        check_json_depth(text)
        value: JSONValue = json.loads(text)
    except JSONTooDeep:
        raise InvalidValue(f"the value nests arrays and objects more than {MAX_JSON_DEPTH} "
                           "levels deep: flatten it, or quote it as a string") from None
    except ValueError:
        return text
    if isinstance(value, float) and not math.isfinite(value):
        return text
    return value


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a lineage applies (product, environment, jurisdiction …).

    Scopes are compared exactly: different scopes are different timelines and never conflict.
    """

    items: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, scope: Scope | Mapping[str, object] | Iterable[tuple[str, object]] | None) -> Scope:
        if scope is None:
            return _GLOBAL if cls is Scope else cls()
        if isinstance(scope, Scope):
            return scope
        pairs = scope.items() if isinstance(scope, Mapping) else scope
        items: dict[str, str] = {}
        for key, value in pairs:
            key = check_name("scope key", key, limit=128)
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise InvalidName(f"scope value for {key!r} must be a string or an integer")
            items[key] = check_name(f"scope value for {key!r}", str(value), limit=256)
        if len(items) > MAX_SCOPE_ENTRIES:
            raise InvalidName(f"scope has {len(items)} entries: the limit is {MAX_SCOPE_ENTRIES}")
        return cls(tuple(sorted(items.items())))

    @classmethod
    def from_key(cls, key: str) -> Scope:
        return cls(tuple(sorted((str(k), str(v)) for k, v in json.loads(key).items())))

    @property
    def key(self) -> str:
        """The canonical JSON spelling, used as the storage key."""
        return canonical_json(dict(self.items))

    def as_dict(self) -> dict[str, str]:
        return dict(self.items)

    def __str__(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.items) or "(global)"


# The global scope, shared (scopes are immutable): most questions name no scope, and a shared
# value is compared by identity first.
_GLOBAL = Scope()

"""JSON Lines input shared by every importer: line numbers, UTF-8 and strict JSON."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from vigente.errors import ImportFileError, InvalidInput
from vigente.jsonlimits import JSONLimitExceeded, check_json_limits

__all__ = ["json_objects", "read_lines"]


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON value")


def read_lines(path: str | Path) -> list[bytes]:
    """The lines of a file, or a clear error when it cannot be read."""
    try:
        return Path(path).read_bytes().splitlines()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None


def json_objects(lines: Iterable[bytes | str]) -> Iterator[tuple[int, dict[str, object]]]:
    """``(line number, object)`` for every non-blank line; a line that is not UTF-8, not
    strict JSON (NaN and Infinity are refused), past a bound of ``JSON_LIMITS`` (nested too
    deep, too many members, values or strings, a number too long: measured before it is
    parsed) or not an object raises ImportFileError."""
    for number, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError:
            raise ImportFileError(number, "not valid UTF-8: re-encode the file") from None
        if not text.strip():
            continue
        try:
            check_json_limits(text)
            obj = json.loads(text, parse_constant=_reject_constant)
        except JSONLimitExceeded as exc:
            raise ImportFileError(number, str(exc)) from None
        except ValueError as exc:
            raise ImportFileError(number, f"malformed JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise ImportFileError(number, "expected a JSON object per line")
        yield number, obj

"""Bad input gets a clear error and writes nothing (API and import files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vigente import (
    FutureKnowledgeError,
    HistoryRewriteError,
    ImportFileError,
    InvalidInterval,
    InvalidName,
    InvalidTime,
    InvalidValue,
    Vigente,
    VigenteError,
)

NOW = "2026-09-29"
GOOD = {
    "op": "record",
    "lineage": "svc/limit",
    "scope": {},
    "value": 50,
    "source": "policy",
    "valid_from": "2026-01-01",
    "valid_to": None,
    "known_at": "2026-01-01",
}


def snapshot(vg: Vigente) -> list[Any]:
    return [(name, scope, vg.history(name, scope=scope)) for name, scope in vg.lineages()]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"valid_from": "2026-09-01T08:00:00"}, InvalidTime, "naive timestamp"),
        ({"known_at": "2026-09-01 08:00:00"}, InvalidTime, "naive timestamp"),
        ({"valid_from": "2026-09-01", "valid_to": "2026-09-01"}, InvalidInterval, "not after"),
        ({"valid_from": "2026-09-02", "valid_to": "2026-09-01"}, InvalidInterval, "not after"),
        ({"known_at": "2027-01-01"}, FutureKnowledgeError, "future"),
        ({"value": float("nan")}, InvalidValue, "JSON"),
        ({"value": {1, 2}}, InvalidValue, "JSON"),
        ({"value": "x" * 2_000_000}, InvalidValue, "limit"),
        ({"lineage": "x" * 600}, InvalidName, "limit"),
        ({"lineage": "  "}, InvalidName, "empty"),
        ({"lineage": "bad\udcff"}, InvalidName, "UTF-8"),
        ({"source": "nul\x00byte"}, InvalidName, "NUL"),
        ({"scope": {"k": ["list"]}}, InvalidName, "scope value"),
    ],
)
def test_a_bad_record_is_refused_with_a_clear_error(
    sqlite_vg: Vigente, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    sqlite_vg.record(
        "svc/limit", 50, valid_from="2026-01-01", known_at="2026-01-01", source="policy", now=NOW
    )
    before = snapshot(sqlite_vg)
    args: dict[str, Any] = {
        "lineage": "svc/limit",
        "value": 80,
        "valid_from": "2026-09-01",
        "known_at": "2026-09-03",
        "source": "policy",
        "now": NOW,
    }
    args.update(kwargs)
    lineage, value = args.pop("lineage"), args.pop("value")
    with pytest.raises(error, match=message):
        sqlite_vg.record(lineage, value, **args)
    assert snapshot(sqlite_vg) == before


def test_sql_metacharacters_are_data_not_sql(sqlite_vg: Vigente) -> None:
    nasty = "x'); DROP TABLE versions; --"
    scope = {'tenant"; DELETE FROM subjects; --': "o'hara", "%_*": "\\"}
    sqlite_vg.record(
        nasty,
        {"q": "'"},
        valid_from="2026-01-01",
        known_at="2026-01-01",
        source="s'; --",
        scope=scope,
        now=NOW,
    )
    e = sqlite_vg.evidence(nasty, valid_at="2026-05-01", scope=scope, now=NOW)
    assert e.status.value == "supported" and e.values == ({"q": "'"},)
    assert sqlite_vg.evidence("x%", valid_at="2026-05-01", scope=scope, now=NOW).status.value == (
        "missing"
    )
    assert [name for name, _ in sqlite_vg.lineages()] == [nasty]


def test_knowledge_going_backwards_names_the_fix(sqlite_vg: Vigente) -> None:
    sqlite_vg.record("l", 1, valid_from="2026-01-01", known_at="2026-03-01", source="s", now=NOW)
    with pytest.raises(HistoryRewriteError, match="--known-at 2026-03-01 or later"):
        sqlite_vg.retract("l", valid_from="2026-01-01", known_at="2026-02-01", source="s", now=NOW)


def test_asking_with_knowledge_from_the_future_is_an_error(sqlite_vg: Vigente) -> None:
    with pytest.raises(FutureKnowledgeError):
        sqlite_vg.evidence("l", valid_at="2026-01-01", known_at="2026-10-01", now=NOW)


def write_lines(path: Path, lines: list[Any]) -> Path:
    with path.open("wb") as f:
        for line in lines:
            if isinstance(line, bytes):
                f.write(line + b"\n")
            elif isinstance(line, str):
                f.write(line.encode() + b"\n")
            else:
                f.write(json.dumps(line).encode() + b"\n")
    return path


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({**GOOD, "op": "upsert"}, "unknown op"),
        ('{"op": "record", "lineage": ', "malformed JSON"),
        ('{"op": "record", "value": NaN}', "malformed JSON"),
        ("[1, 2]", "JSON object"),
        ({**GOOD, "valid_from": "2026-09-01T08:00:00"}, "naive timestamp"),
        ({**GOOD, "valid_to": "2025-01-01"}, "not after"),
        ({**GOOD, "known_at": "2025-12-01"}, "rewrite history"),
        ({k: v for k, v in GOOD.items() if k != "value"}, 'needs a "value"'),
        ({**GOOD, "op": "retract"}, 'takes no "value"'),
        ({**GOOD, "colour": "red"}, "colour"),
        ({**GOOD, "source": 7}, "source"),
        ({**GOOD, "lineage": "y" * 5000}, "limit"),
        (b'{"op": "record", "lineage": "\xff\xfe"}', "UTF-8"),
    ],
)
def test_an_import_with_one_bad_line_writes_nothing(
    sqlite_vg: Vigente, tmp_path: Path, bad: Any, message: str
) -> None:
    sqlite_vg.record(
        "svc/limit", 40, valid_from="2025-01-01", known_at="2026-01-01", source="policy", now=NOW
    )
    before = snapshot(sqlite_vg)
    first = {**GOOD, "lineage": "svc/other", "value": 1}
    path = write_lines(tmp_path / "bad.jsonl", [first, "", bad])
    with pytest.raises(ImportFileError, match=message) as info:
        sqlite_vg.import_jsonl(path, now=NOW)
    assert info.value.line_number == 3
    assert str(info.value).startswith("line 3:")
    assert snapshot(sqlite_vg) == before


def test_a_good_import_applies_every_line_atomically(sqlite_vg: Vigente, tmp_path: Path) -> None:
    lines = [
        GOOD,
        {**GOOD, "value": 80, "valid_from": "2026-09-01", "known_at": "2026-09-03"},
        {k: v for k, v in GOOD.items() if k != "value"}
        | {"op": "retract", "valid_from": "2026-10-01", "known_at": "2026-09-20"},
    ]
    report = sqlite_vg.import_jsonl(write_lines(tmp_path / "ok.jsonl", lines), now=NOW)
    assert report.statements == 3 and report.applied == 3
    e = sqlite_vg.evidence("svc/limit", valid_at="2026-10-05", now=NOW)
    assert e.status.value == "missing"
    assert list(sqlite_vg.evidence("svc/limit", valid_at="2026-09-15", now=NOW).values) == [80]


def test_every_error_is_a_vigente_error() -> None:
    for error in (
        InvalidTime,
        InvalidInterval,
        InvalidName,
        InvalidValue,
        ImportFileError,
        HistoryRewriteError,
        FutureKnowledgeError,
    ):
        assert issubclass(error, VigenteError)

"""The default extractor on typical results, and a user's own extractor plugged in."""

from __future__ import annotations

import json

from vigente import Vigente
from vigente.runtime import DefaultExtractor, Extraction, Runtime


def extract(result: object, status: str = "succeeded") -> Extraction:
    raw = result if isinstance(result, bytes) else (
        result.encode() if isinstance(result, str) else json.dumps(result).encode())
    found = DefaultExtractor().extract("search", status, b'{"q": "x"}', raw)
    assert found is not None
    return found


def test_identifiers_and_scalars_are_kept_exactly() -> None:
    e = extract({"user": {"id": "mia_li_3668", "points": 12}, "ok": True})
    assert e.facts == {"user": {"id": "mia_li_3668", "points": 12}, "ok": True}
    assert e.summary.startswith('search(q="x") succeeded: user: 2 fields (id, points)')
    assert not e.limit_notes  # every value kept: the memory is the result, compacted


def test_a_list_of_objects_becomes_a_table_with_nested_fields_as_columns() -> None:
    rows = [{"id": f"F{n}", "price": {"eco": n, "biz": 3 * n}, "status": "open"}
            for n in range(3)]
    e = extract({"flights": rows})
    table = e.facts["flights"]
    assert table["columns"] == ["id", "price.eco", "price.biz"]
    assert table["rows"][2] == ["F2", 2, 6]
    assert table["every_row"] == {"status": "open"}  # the same in every row: said once
    assert not e.limit_notes


def test_a_list_of_lists_of_objects_is_one_table_in_groups() -> None:
    legs = [[{"n": "A1", "to": "X"}, {"n": "B2", "to": "Y"}], [{"n": "C3", "to": "Y"}]]
    e = extract(legs)
    assert e.facts["result"] == {"columns": ["n", "to"],
                                 "groups": [[["A1", "X"], ["B2", "Y"]], [["C3", "Y"]]]}


def test_a_field_that_repeats_its_key_is_kept_with_its_key() -> None:
    e = extract({"cards": {"card_7": {"id": "card_7", "last_four": "1907"}}})
    assert e.facts == {"cards": {"card_7": {"id": "card_7", "last_four": "1907"}}}
    assert not e.limit_notes


def test_long_lists_keep_their_first_rows_with_a_limit_note() -> None:
    rows = [{"id": f"F{n}", "price": n, "legs": [n, n + 1]} for n in range(120)]
    e = extract({"flights": rows})
    table = e.facts["flights"]
    assert table["columns"] == ["id", "price", "legs"] and len(table["rows"]) == 50
    assert table["rows"][7] == ["F7", 7, [7, 8]]
    assert any("first 50 of 120 items" in n for n in e.limit_notes)


def test_a_long_text_is_left_out_not_shortened() -> None:
    e = extract({"body": "y" * 500, "id": "doc-1"})
    assert e.facts == {"id": "doc-1"} and any("500 characters" in n for n in e.limit_notes)


def test_text_keeps_key_value_lines_and_binary_keeps_nothing() -> None:
    e = extract("Status: confirmed\nPNR: X1Y2\n\nfree text that is not a fact")
    assert e.facts == {"Status": "confirmed", "PNR": "X1Y2"}
    b = extract(b"\xff\xfe\x00")
    assert b.facts == {} and "binary" in b.summary


class Shouting:
    """A user's extractor: any text in capitals (stands in for a model-written summary)."""

    name = "shouting-v1"

    def extract(self, tool_name: str, status: str, arguments: bytes, result: bytes
                ) -> Extraction | None:
        return Extraction(summary=result.decode().upper())


def test_a_plugged_in_extractor_writes_the_derived_memory(sqlite_vg: Vigente) -> None:
    rt = Runtime(sqlite_vg.store, extractor=Shouting())
    rt.open_conversation("c", "a")
    rt.add_participant("c", "p", model="m")
    rt.fork_branch("c", "main")
    rt.start_run("c", "r", branch="main", participant="p")
    rt.record_tool_call("c", "t", run="r", name="echo", arguments={})
    rt.record_tool_result("c", "t", status="succeeded", content="hello")
    (memory,) = rt.graph("c").of_kind("memory")
    assert memory.summary == "HELLO" and memory.extractor == "shouting-v1"
    assert memory.sources == ("t",) and memory.provenance == ("artifact:t",)

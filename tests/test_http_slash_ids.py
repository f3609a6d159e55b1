"""Runtime ids holding ``/`` over HTTP (a LangGraph thread ``team/alpha``, ``tau/airline/17``),
sent raw and percent-encoded, through a real uvicorn server with an httpx client, on SQLite and
PostgreSQL: every conversation read, assemble / explain / why-not / rebuild / diff, the purge
of an account, the edge of an id ending in a route's suffix, and the inspector's links to such
conversations. Then the inspector's answer to a page address that does not validate: an HTML
page naming the parameter, while the JSON API keeps its one error shape."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.conformance.test_runtime import session
from tests.http_server import running, service_root
from vigente.http import ServiceConfig, create_app

ADMIN_KEY = "slash-admin-key-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
C = "team/alpha"  # a LangGraph thread id
C2 = "tau/airline/17"
PREFIX = "team"  # a conversation whose id is the first segment of C's: never confused with it
TRICKY = "q&a/50% off/#1+2"  # only encoded can carry it: `#`, `?`-like and `%` in the id
LITERAL = "odd/%2F/id"  # holds the three characters %2F themselves, not an encoded slash
BRANCH = "feature/x"
ACCOUNT = "org/acct-1"
KNOWN = "2026-10-06T00:00:00+00:00"  # after the session: a fixed `known_at`, so answers compare


def events(conversation: str, account: str = ACCOUNT) -> list[dict[str, Any]]:
    """The contract's session under ``conversation``, with a branch and tool calls whose ids
    hold ``/`` too."""
    rename = {"other": BRANCH, "t1": "calls/t1", "t2": "calls/t2"}
    out = []
    for e in session():
        e = {k: rename.get(v, v) if k in ("id", "branch", "call") else v for k, v in e.items()}
        if e["event"] == "conversation":
            e.update(id=conversation, account=account)
        else:
            e["conversation"] = conversation
        out.append(e)
    return out


def forms(id_: str) -> list[str]:
    """The id as a client puts it in a path: raw, and percent-encoded (every `/` as %2F)."""
    return [id_, quote(id_, safe="")]


@contextmanager
def serving(root: str) -> Iterator[tuple[httpx.Client, dict[str, str]]]:
    """A server over ``root`` holding one tenant; a client and the tenant's key header."""
    app = create_app(ServiceConfig(root, admin_key=ADMIN_KEY, rate=1000, burst=1000))
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        assert c.post("/v1/admin/tenants", json={"name": "acme"}, headers=ADMIN).status_code == 201
        r = c.post("/v1/admin/tenants/acme/keys", json={"role": "service"}, headers=ADMIN)
        assert r.status_code == 201, r.text
        yield c, {"Authorization": f"Bearer {r.json()['key']}"}


@pytest.fixture(params=["sqlite", "postgres"])
def served(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[httpx.Client, dict[str, str]]]:
    root = service_root(request, tmp_path)
    with serving(root) as pair:
        yield pair


@pytest.fixture
def sqlite_served(tmp_path: Path) -> Iterator[tuple[httpx.Client, dict[str, str]]]:
    with serving(str(tmp_path / "data")) as pair:
        yield pair


def write(c: httpx.Client, key: dict[str, str], batch: list[dict[str, Any]]) -> None:
    r = c.post("/v1/runtime/events", json={"events": batch}, headers=key)
    assert r.status_code == 200, r.text


def ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, (response.request.url, response.text)
    body: dict[str, Any] = response.json()
    return body


def error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    message: str = body["error"]["message"]
    return message


def test_every_conversation_read_takes_an_id_with_slashes_raw_and_encoded(
    served: tuple[httpx.Client, dict[str, str]],
) -> None:
    c, key = served
    write(c, key, events(C) + events(C2))
    write(c, key, events(PREFIX, account="acct-team")[:3])
    listed = ok(c.get("/v1/conversations", headers=key))["conversations"]
    assert sorted(x["id"] for x in listed) == sorted([C, C2, PREFIX])
    known = {"known_at": KNOWN}
    for cid in (C, C2):
        answers = []
        for form in forms(cid):
            base = f"/v1/conversations/{form}"
            graph = ok(c.get(base, params=known, headers=key))
            assert graph["conversation"]["id"] == cid
            assert graph["conversation"]["account"] == ACCOUNT
            records = {(x["kind"], x["id"]) for x in graph["records"]}
            assert {("branch", BRANCH), ("tool_call", "calls/t1"), ("message", "m3")} <= records
            of_branch = ok(c.get(base, params={**known, "branch": BRANCH}, headers=key))
            assert "m3" not in {x["id"] for x in of_branch["records"]}  # main's, after the fork
            branches = ok(c.get(f"{base}/branches", params=known, headers=key))
            assert branches["conversation"] == cid
            assert [(b["id"], b["parent"], b["fork_after"]) for b in branches["branches"]] == [
                ("main", None, None),
                (BRANCH, "main", "m2"),
            ]
            runs = ok(c.get(f"{base}/runs", params=known, headers=key))
            assert [(r["id"], r["branch"]) for r in runs["runs"]] == [
                ("r1", "main"),
                ("r2", BRANCH),
            ]
            transcript = ok(c.get(f"{base}/transcript", params={"branch": BRANCH}, headers=key))
            assert transcript["conversation"] == cid
            assert [m["id"] for m in transcript["messages"]] == ["m0", "m1", "m2", "o1"]
            assemblies = ok(c.get(f"{base}/assemblies", headers=key))
            assert assemblies == {"conversation": cid, "assemblies": []}
            answers.append((graph, branches, runs, transcript))
        raw, encoded = answers
        assert raw == encoded
    # the conversation named by C's first segment is its own, not C's
    prefix = ok(c.get(f"/v1/conversations/{PREFIX}", headers=key))
    assert prefix["conversation"]["account"] == "acct-team"
    assert {x["id"] for x in prefix["records"]} == {"agent", "main"}
    # an id that holds no conversation is a 404 naming it, raw or encoded
    for form in forms("team/nobody"):
        message = error(c.get(f"/v1/conversations/{form}/runs", headers=key), 404, "not_found")
        assert "'team/nobody'" in message


def test_assemble_and_explain_a_conversation_whose_id_holds_slashes(
    served: tuple[httpx.Client, dict[str, str]],
) -> None:
    c, key = served
    write(c, key, events(C))
    made = []
    for branch in ("main", BRANCH):
        body = {"conversation": C, "branch": branch, "participant": "agent"}
        made.append(ok(c.post("/v1/assemble", json=body, headers=key))["assembly_id"])
    first, second = made
    for form in forms(C):
        listed = ok(c.get(f"/v1/conversations/{form}/assemblies", headers=key))
        assert listed == {"conversation": C, "assemblies": [first, second]}
    explained = ok(c.get(f"/v1/assemblies/{second}", headers=key))
    assert explained["assembly_id"] == second
    assert "calls/t2#memory" in {d["ref"] for d in explained["included"]}  # the branch's call
    # a call id holding `/` in the query: main's assembly never saw the branch's call
    why = ok(c.get(f"/v1/assemblies/{first}/why-not", params={"ref": "calls/t2"}, headers=key))
    assert why["ref"].startswith("calls/t2") and why["reason"] == "other_branch"
    rebuilt = ok(c.get(f"/v1/assemblies/{second}/rebuild", headers=key))
    assert rebuilt["assembly_id"] == second and rebuilt["matches"] is True
    diff = ok(c.get(f"/v1/assemblies/{second}/diff", params={"before": first}, headers=key))
    assert (diff["before"], diff["after"]) == (first, second)
    assert "calls/t2#memory" in {d["ref"] for d in diff["added"]}
    for form in forms("asm/none"):
        message = error(c.get(f"/v1/assemblies/{form}/rebuild", headers=key), 404, "not_found")
        assert "asm/none" in message


def test_purge_an_account_whose_id_holds_slashes(
    served: tuple[httpx.Client, dict[str, str]],
) -> None:
    c, key = served
    write(c, key, events(C) + events(C2) + events(PREFIX, account="acct-team"))
    dry = [
        ok(c.delete(f"/v1/accounts/{form}", params={"dry_run": "true"}, headers=key))
        for form in forms(ACCOUNT)
    ]
    assert dry[0] == dry[1]
    assert dry[0]["account"] == ACCOUNT and sorted(dry[0]["conversations"]) == sorted([C, C2])
    assert dry[0]["rows"] > 0 and dry[0]["dry_run"] is True
    done = ok(c.delete(f"/v1/accounts/{quote(ACCOUNT, safe='')}", headers=key))
    assert sorted(done["conversations"]) == sorted([C, C2]) and done["dry_run"] is False
    error(c.get(f"/v1/conversations/{C}", headers=key), 404, "not_found")
    assert ok(c.get(f"/v1/conversations/{PREFIX}", headers=key))["conversation"]["id"] == PREFIX


def test_an_id_ending_in_a_suffix_and_ids_only_encoding_can_carry(
    served: tuple[httpx.Client, dict[str, str]],
) -> None:
    c, key = served
    write(c, key, events("x", account="a-x")[:3] + events("x/branches", account="a-xb")[:3])
    write(c, key, events(TRICKY) + events(LITERAL))
    # raw, `x/branches` is the suffix route of `x`; encoded, it is the id `x/branches`
    raw = ok(c.get("/v1/conversations/x/branches", headers=key))
    assert raw["conversation"] == "x" and [b["id"] for b in raw["branches"]] == ["main"]
    encoded = ok(c.get("/v1/conversations/x%2Fbranches", headers=key))
    assert encoded["conversation"]["id"] == "x/branches"
    assert encoded["conversation"]["account"] == "a-xb"
    of_it = ok(c.get("/v1/conversations/x%2Fbranches/branches", headers=key))
    assert of_it["conversation"] == "x/branches"
    # the same holds for an assembly's suffixes: an encoded slash is never a separator
    error(c.get("/v1/assemblies/asm%2Frebuild", headers=key), 404, "not_found")
    for cid in (TRICKY, LITERAL):
        path = f"/v1/conversations/{quote(cid, safe='')}"
        assert ok(c.get(path, headers=key))["conversation"]["id"] == cid
        assert ok(c.get(f"{path}/runs", headers=key))["conversation"] == cid
    # an empty id is refused by the schema, in the API's one error shape
    message = error(c.get("/v1/conversations//branches", headers=key), 422, "invalid_request")
    assert "path conversation" in message
    # the OpenAPI document names the parameters plainly (no `:path` convertor in it)
    paths = set(ok(c.get("/openapi.json"))["paths"])
    assert {
        "/v1/conversations/{conversation}",
        "/v1/conversations/{conversation}/branches",
        "/v1/assemblies/{assembly_id}/why-not",
        "/v1/accounts/{account}",
    } <= paths
    assert not any(":path" in p for p in paths)


def _links(page: str, prefix: str) -> dict[str, str]:
    """The page's links whose address starts with ``prefix``: text → address (as a browser
    reads the attribute)."""
    found = re.findall(rf'href="({re.escape(prefix)}[^"]*)">([^<]*)</a>', page)
    return {html.unescape(text): html.unescape(href) for href, text in found}


def test_the_inspector_links_to_conversations_whose_ids_hold_slashes(
    served: tuple[httpx.Client, dict[str, str]],
) -> None:
    c, key = served
    write(c, key, events(C) + events(C2) + events(TRICKY))
    body = {"conversation": C, "branch": BRANCH, "participant": "agent"}
    assembly_id = ok(c.post("/v1/assemble", json=body, headers=key))["assembly_id"]
    assert c.post("/login", data={"key": key["Authorization"][7:], "next": "/"}).status_code == 303
    listing = c.get("/runtime")
    assert listing.status_code == 200, listing.text
    links = _links(listing.text, "/runtime/conversation?")
    assert set(links) == {C, C2, TRICKY}
    for cid, href in links.items():
        page = c.get(href)
        assert page.status_code == 200, (href, page.text[:500])
        assert f'data-testid="conversation">{html.escape(cid)}</code>' in page.text
        assert f'data-branch="{BRANCH}"' in page.text
    # the conversation's assembly, and from the assembly's page back to the conversation
    to_assembly = _links(c.get(links[C]).text, "/assembly/")
    assert list(to_assembly) == [assembly_id]
    shown = c.get(to_assembly[assembly_id])
    assert shown.status_code == 200, shown.text[:500]
    back = _links(shown.text, "/runtime/conversation?")
    assert list(back) == [C]
    assert c.get(back[C]).status_code == 200


# -- the inspector's pages refuse a bad address with an HTML page ------------------------------
def html_error(response: httpx.Response, status: int = 422) -> str:
    """The refusal's text, checked to be an inspector page (its layout and headers)."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in response.headers["content-security-policy"]
    page = response.text
    assert "<h1>Bad address</h1>" in page and 'data-testid="fix"' in page
    assert 'href="/static/inspector.css"' in page  # the inspector's own layout
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_a_page_address_that_does_not_validate_is_an_html_page(
    sqlite_served: tuple[httpx.Client, dict[str, str]],
) -> None:
    c, key = sqlite_served
    write(c, key, events(C))
    assembly_id = ok(
        c.post(
            "/v1/assemble",
            json={"conversation": C, "branch": "main", "participant": "agent"},
            headers=key,
        )
    )["assembly_id"]
    assert c.post("/login", data={"key": key["Authorization"][7:], "next": "/"}).status_code == 303
    assert c.get("/runtime/conversation", params={"id": C}).status_code == 200

    text = html_error(c.get("/runtime/conversation", params={"id": C, "stale": "true"}))
    assert "unknown query parameter(s) 'stale'" in text and "takes id, k" in text
    text = html_error(c.get("/runtime/conversation"))
    assert "the query parameter 'id' is required" in text
    text = html_error(c.get("/runtime/conversation", params={"id": C, "k": "x" * 1025}))
    assert "the query parameter 'k'" in text and "at most 1024 characters" in text
    text = html_error(c.get(f"/assembly/{assembly_id}", params={"rebuild": "yes-please-now"}))
    assert "the query parameter 'rebuild'" in text and "at most 8 characters" in text
    text = html_error(c.get("/review", params={"status": "x" * 17}))
    assert "the query parameter 'status'" in text
    text = html_error(c.get("/runtime/conversation", params={"id": "a\x00b"}))
    assert "NUL" in text
    # what the address held is shown escaped, never as markup
    r = c.get("/search", params={"q": "limit", "<script>alert(1)</script>": "1"})
    assert "unknown query parameter(s) '<script>alert(1)</script>'" in html_error(r)
    assert "<script>alert" not in r.text
    # the login page, served beside the pages, too (before any key is given)
    with httpx.Client(base_url=str(c.base_url), timeout=60) as anonymous:
        text = html_error(anonymous.get("/login", params={"next": "/" + "x" * 2048}))
        assert "the query parameter 'next'" in text

    # the JSON API keeps its one error shape for the same mistakes
    message = error(
        c.get("/v1/conversations", params={"stale": "true"}, headers=key), 422, "invalid_request"
    )
    assert "unknown query parameter(s) 'stale'" in message
    message = error(
        c.get(f"/v1/conversations/{C}", params={"content": "maybe"}, headers=key),
        422,
        "invalid_request",
    )
    assert "query content" in message
    message = error(
        c.get(f"/v1/assemblies/{assembly_id}/why-not", headers=key), 422, "invalid_request"
    )
    assert "query ref" in message

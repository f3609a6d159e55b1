"""The inspector's refusals as a browser meets them, through a real uvicorn server on loopback
(SQLite) with an httpx client, and once in Chromium: an address of the inspector that names no
page is an HTML 404 page in the inspector's layout (naming the path, a page close to it, a link
to the start page) while the JSON API keeps its one error shape for its unknown paths, and a
client that does not read HTML gets that JSON error for any address that is no page; a page
whose object does not exist is an HTML 404 in the layout; the unknown-parameter message on a
page says "this page takes"; and a browser without a usable key logs in before it is told that
the address is bad, the key being checked as the page itself checks it."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.browser import chromium, watched_page
from tests.conftest import TEST_DATA
from tests.http_server import running
from vigente.http import ServiceConfig, create_app
from vigente.http.inspector._refusals import API_PATHS, is_api_path

ADMIN_KEY = "errors-admin-key-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
SCENARIO = TEST_DATA / "scenarios" / "branch_isolation.jsonl"
CONVERSATION = "s"  # the scenario's conversation
#: What a browser sends when it opens an address (Chromium's, as the browser test sees).
BROWSER_ACCEPT = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
)


@dataclass
class Served:
    url: str
    keys: dict[str, str]  # tenant -> key
    assembly: str  # the id of a recorded assembly of acme's conversation

    @contextmanager
    def client(self, key: str | None = None, **headers: str) -> Iterator[httpx.Client]:
        """A client (without following redirects), logged in with ``key`` (its cookie) or not,
        sending a browser's ``Accept`` unless ``headers`` give another."""
        headers = {"accept": BROWSER_ACCEPT, **headers}
        with httpx.Client(
            base_url=self.url, timeout=60, follow_redirects=False, headers=headers
        ) as client:
            if key is not None:
                r = client.post("/login", data={"key": key, "next": "/"})
                assert r.status_code == 303, r.text
            yield client


def _tenants(c: httpx.Client, names: tuple[str, ...]) -> dict[str, str]:
    keys = {}
    for name in names:
        assert c.post("/v1/admin/tenants", json={"name": name}, headers=ADMIN).status_code == 201
        r = c.post(f"/v1/admin/tenants/{name}/keys", json={"role": "service"}, headers=ADMIN)
        assert r.status_code == 201, r.text
        keys[name] = r.json()["key"]
    return keys


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = str(tmp_path_factory.mktemp("inspector-errors") / "data")
    app = create_app(ServiceConfig(root, admin_key=ADMIN_KEY, rate=1000, burst=1000))
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        keys = _tenants(c, ("acme", "other"))
        key = {"Authorization": f"Bearer {keys['acme']}"}
        events = [
            json.loads(line)
            for line in SCENARIO.read_text(encoding="utf-8").splitlines()
            if json.loads(line)["event"] != "expect"
        ]
        r = c.post("/v1/runtime/events", json={"events": events}, headers=key)
        assert r.status_code == 200, r.text
        r = c.post(
            "/v1/assemble",
            json={"conversation": CONVERSATION, "branch": "main", "participant": "agent"},
            headers=key,
        )
        assert r.status_code == 200, r.text
        yield Served(url, keys, r.json()["assembly_id"])


def _text(page: str) -> str:
    """The page's text without tags and with entities read, whitespace collapsed."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page))).strip()


def _inspector_page(r: httpx.Response, status: int) -> str:
    """``r`` is a page of the inspector with ``status`` (its layout, its headers); its text."""
    assert r.status_code == status, (r.request.url, r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("text/html"), r.headers["content-type"]
    assert "default-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["cache-control"] == "no-store"
    assert 'href="/static/inspector.css"' in r.text  # the inspector's own layout
    assert '<a class="brand" href="/">' in r.text
    return _text(r.text)


def _not_found_page(r: httpx.Response, path: str) -> str:
    text = _inspector_page(r, 404)
    assert "<h1>Page not found</h1>" in r.text
    assert f"there is no page {path} in the inspector" in text
    assert '<a href="/" data-testid="start-page">The inspector\'s home page</a>' in r.text
    return text


def _suggestion(r: httpx.Response) -> str | None:
    found = re.search(r'data-testid="suggestion">Did you mean <a href="([^"]*)">', r.text)
    return None if found is None else html.unescape(found.group(1))


def _json_error(r: httpx.Response, status: int, code: str) -> str:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"status", "code", "message"}
    assert body["error"]["status"] == status and body["error"]["code"] == code, body
    message: str = body["error"]["message"]
    return message


# -- unknown paths ------------------------------------------------------------------------------
UNKNOWN_PAGES = {
    # path asked -> the page suggested instead (None: none is close)
    "/runtime/nope": "/runtime",
    "/runtmie": "/runtime",
    "/reviw": "/review",
    "/serach": "/search",
    "/lineage/cdd": None,
    "/static/nope.css": None,
    "/v2/conversations": None,  # not the API's: the API is /v1
    "/v1x": None,
    "/mcpx/tools": None,
}


@pytest.mark.parametrize("logged_in", [False, True], ids=["anonymous", "logged-in"])
def test_an_unknown_inspector_path_is_an_html_404_page_in_the_layout(
    served: Served, logged_in: bool
) -> None:
    key = served.keys["acme"] if logged_in else None
    with served.client(key) as c:
        for path, suggested in UNKNOWN_PAGES.items():
            for method in ("GET", "POST"):
                r = c.request(method, path)
                if method == "POST" and path.startswith("/static/"):
                    # the static files answer any other method than GET with a 405 (a page)
                    assert "it takes GET, HEAD" in _inspector_page(r, 405)
                    continue
                _not_found_page(r, path)
                assert _suggestion(r) == suggested, (path, r.text)
        # the suggestion and the start page are pages that answer (or ask for the login first)
        for target in ("/runtime", "/"):
            r = c.get(target)
            assert r.status_code == (200 if logged_in else 303), (target, r.text[:300])
        # `/assembly/` names no assembly: a 404 saying which address to use
        r = c.get("/assembly/")
        text = _not_found_page(r, "/assembly/")
        assert "an assembly's page is /assembly/ID" in text
        assert _suggestion(r) is None
        # without the slash the router adds it, and the browser lands on the same page
        r = c.get("/assembly", follow_redirects=True)
        _not_found_page(r, "/assembly/")
        # what the address held is shown escaped, never as markup
        r = c.get("/%3Cscript%3Ealert(1)%3C/script%3E")
        assert "<script>alert" not in r.text
        assert "there is no page /<script>alert(1)</script> in the inspector" in _text(r.text)
        long = "/" + "x" * 5000
        r = c.get(long)
        assert f"there is no page {long[:200]}… in the inspector" in _inspector_page(r, 404)
        assert long not in r.text


def test_a_method_a_page_does_not_take_is_an_html_405_page(served: Served) -> None:
    with served.client(served.keys["acme"]) as c:
        r = c.get("/review/some-proposal/approve")  # a form's target, opened in the address bar
        text = _inspector_page(r, 405)
        assert "<h1>Method not allowed</h1>" in r.text
        assert "GET is not allowed on /review/some-proposal/approve: it takes POST" in text
        assert r.headers["allow"] == "POST"
        r = c.delete("/runtime")
        assert "DELETE is not allowed on /runtime: it takes GET" in _inspector_page(r, 405)


def test_the_json_api_keeps_its_one_error_shape_for_unknown_paths(served: Served) -> None:
    key = {"Authorization": f"Bearer {served.keys['acme']}"}
    # a browser's Accept header changes nothing: the path decides
    with served.client(served.keys["acme"], accept="text/html,*/*;q=0.8") as c:
        for path in (
            "/v1",
            "/v1/",
            "/v1/nope",
            "/v1/no/such/endpoint",
            "/v1/health/x",
            "/mcp/nope",
            "/openapi.json/x",
            "/docs",
            "/redoc",
        ):
            for headers in ({}, key):
                message = _json_error(c.get(path, headers=headers), 404, "not_found")
                assert message == f"no endpoint {path}: see /openapi.json for the endpoints"
        message = _json_error(c.delete("/v1/health"), 405, "method_not_allowed")
        assert message.startswith("DELETE is not allowed on /v1/health")
        # every endpoint the API documents is on the API's paths; no page is
        documented = c.get("/openapi.json").json()["paths"]
        assert documented and all(is_api_path(p) for p in documented), sorted(documented)
        for page in ("/", "/runtime", "/assembly/x", "/review", "/login", "/static/x.css"):
            assert not is_api_path(page)
        assert c.get("/v1/health").json()["status"] == "ok"
    assert API_PATHS == ("/v1", "/mcp", "/openapi.json", "/docs", "/redoc")


@pytest.mark.parametrize("accept", ["application/json", "*/*", None], ids=["json", "any", "none"])
def test_a_json_client_that_mistypes_an_address_gets_the_api_s_json_error(
    served: Served, accept: str | None
) -> None:
    key = {"Authorization": f"Bearer {served.keys['acme']}"}
    with httpx.Client(base_url=served.url, timeout=60, follow_redirects=False) as c:
        headers = dict(key)
        if accept is None:
            c.headers.pop("accept")
        else:
            headers["accept"] = accept
        for path in ("/v2/health", "/api/v1/ask", "/runtimee", "/nope"):
            message = _json_error(c.get(path, headers=headers), 404, "not_found")
            assert message == f"no endpoint {path}: see /openapi.json for the endpoints"
        message = _json_error(c.delete("/runtime", headers=headers), 405, "method_not_allowed")
        assert message.startswith("DELETE is not allowed on /runtime: see /openapi.json")
        # a page that exists is still a page, and the API still answers
        assert c.get("/login", headers=headers).headers["content-type"].startswith("text/html")
        assert c.get("/v1/health", headers=headers).json()["status"] == "ok"
    # the same addresses opened by a browser are the inspector's pages
    with served.client(served.keys["acme"]) as browser:
        _not_found_page(browser.get("/v2/health"), "/v2/health")
        assert "DELETE is not allowed on /runtime" in _inspector_page(
            browser.delete("/runtime"), 405
        )


# -- a page whose object does not exist ---------------------------------------------------------
def test_a_page_whose_object_does_not_exist_is_an_html_404_in_the_layout(served: Served) -> None:
    found = {
        f"/runtime/conversation?id={CONVERSATION}": "Conversation",
        f"/assembly/{quote(served.assembly, safe='')}": "Assembly",
    }
    missing = {
        "/runtime/conversation?id=nope": "unknown conversation 'nope'",
        "/runtime/conversation?id=" + quote("team/alpha", safe=""): "unknown conversation",
        "/assembly/nope": "unknown assembly 'nope'",
        f"/assembly/{quote(served.assembly, safe='')}x": "unknown assembly",
        "/assembly/a/b": "unknown assembly 'a/b'",
        "/review/nope": "no proposal 'nope'",
        "/lineage?name=nope": "no lineage 'nope'",
    }
    with served.client(served.keys["acme"]) as c:
        for path, heading in found.items():
            assert heading in _inspector_page(c.get(path), 200)
        for path, message in missing.items():
            r = c.get(path)
            text = _inspector_page(r, 404)
            assert message in text, (path, text)
            # the layout's navigation, with the tenant, leads back to the inspector's pages
            assert 'data-testid="tenant">acme<' in r.text
            for link in ('href="/"', 'href="/runtime"', 'href="/review"'):
                assert link in r.text
        r = c.post("/review/nope/approve", data={"note": "x"})
        assert "no proposal 'nope'" in _inspector_page(r, 404)
    # another tenant's objects are not found either (they are not this tenant's)
    with served.client(served.keys["other"]) as c:
        for path in found:
            r = c.get(path)
            assert 'data-testid="tenant">other<' in r.text
            _inspector_page(r, 404)


def test_a_bug_on_a_page_is_an_html_500_page_in_the_layout(tmp_path: Path) -> None:
    """An exception no handler answers, raised by a page, is an HTML 500 in the inspector's
    layout (not the API's JSON 500); the API's endpoints keep their JSON 500."""
    from fastapi import APIRouter

    from vigente.http.inspector._render import OpenPageRoute

    app = create_app(ServiceConfig(str(tmp_path / "data"), admin_key=ADMIN_KEY))
    broken = APIRouter(route_class=OpenPageRoute)

    @broken.get("/broken-page")
    def broken_page() -> None:
        raise KeyError("secret-in-the-request")

    app.include_router(broken)
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        r = c.get("/broken-page", headers={"accept": BROWSER_ACCEPT})
        text = _inspector_page(r, 500)
        assert "<h1>Internal error</h1>" in r.text
        assert "unexpected KeyError: this is a bug in vigente" in text
        assert "secret-in-the-request" not in text  # the message can quote the request: never shown
        # the connection stays usable, and the API's refusals keep their shape
        _json_error(c.get("/v1/nope"), 404, "not_found")


# -- the unknown-parameter message --------------------------------------------------------------
def test_an_unknown_parameter_on_a_page_says_this_page_takes(served: Served) -> None:
    key = {"Authorization": f"Bearer {served.keys['acme']}"}
    with served.client(served.keys["acme"]) as c:
        r = c.get("/runtime/conversation", params={"id": CONVERSATION, "stale": "true"})
        text = _inspector_page(r, 422)
        assert "<h1>Bad address</h1>" in r.text
        assert "unknown query parameter(s) 'stale': this page takes id, k" in text
        assert "endpoint" not in text
        text = _inspector_page(c.get("/runtime", params={"x": "1"}), 422)
        assert "unknown query parameter(s) 'x': this page takes no query parameters" in text
        r = c.get(f"/assembly/{quote(served.assembly, safe='')}", params={"whynot": "u1"})
        text = _inspector_page(r, 422)
        assert "'whynot': this page takes before, rebuild, why_not" in text
        # the JSON API's wording is a contract its clients read: unchanged
        message = _json_error(
            c.get("/v1/conversations", params={"stale": "1"}, headers=key), 422, "invalid_request"
        )
        assert re.fullmatch(
            r"unknown query parameter\(s\) 'stale': this endpoint takes \S.*", message
        )
        message = _json_error(c.get("/v1/health", params={"x": "1"}), 422, "invalid_request")
        assert message == "unknown query parameter(s) 'x': this endpoint takes none"


# -- the login comes first ----------------------------------------------------------------------
BAD_ADDRESSES = {
    # a page's address that does not validate -> what the page says once logged in
    f"/runtime/conversation?id={CONVERSATION}&stale=true": "this page takes id, k",
    "/runtime/conversation": "the query parameter 'id' is required",
    "/runtime?k=" + "x" * 10: "this page takes no query parameters",
    "/review?status=" + "x" * 17: "the query parameter 'status'",
    "/runtime/conversation?id=a%00b": "NUL",
}


def test_an_anonymous_browser_logs_in_before_it_is_told_the_address_is_bad(
    served: Served,
) -> None:
    for address, said in BAD_ADDRESSES.items():
        with served.client() as c:
            r = c.get(address)
            assert r.status_code == 303, (address, r.text[:300])
            location = r.headers["location"]
            assert location == "/login?next=" + quote(address, safe=""), location
            form = c.get(location)
            next_url = re.search(r'name="next" value="([^"]*)"', form.text)
            assert next_url is not None and html.unescape(next_url.group(1)) == address
            r = c.post("/login", data={"key": served.keys["acme"], "next": address})
            assert r.status_code == 303 and r.headers["location"] == address
            r = c.get(r.headers["location"])
            text = _inspector_page(r, 422)
            assert "<h1>Bad address</h1>" in r.text and said in text, (address, text)
            assert 'data-testid="tenant">acme<' in r.text  # now the page knows who is looking
    # a key in the header is checked the same way: the tenant's own layout
    header = {"Authorization": f"Bearer {served.keys['other']}"}
    with served.client(**header) as c:
        r = c.get("/runtime", params={"x": "1"})
        _inspector_page(r, 422)
        assert 'data-testid="tenant">other<' in r.text


def test_a_bad_address_is_no_way_around_the_key(served: Served) -> None:
    """What a page answers a request without a usable key, its bad address answers too."""
    address = "/runtime?x=1"
    # an unknown key in the cookie: the login page says so and forgets the cookie
    with served.client() as c:
        c.cookies.set("vigente_key", "vgk_0123456789abcdef_" + "x" * 43)
        for path in ("/runtime", address):
            r = c.get(path)
            assert "unknown or revoked API key" in _inspector_page(r, 401), path
            assert "max-age=0" in r.headers["set-cookie"].lower()
    # the admin key manages tenants, not data: refused before the address is looked at
    with served.client(**ADMIN) as c:
        for path in ("/runtime", address):
            r = c.get(path)
            assert "the admin key manages tenants and keys only" in _inspector_page(r, 403)
            assert "Bad address" not in r.text
    # a form posted without a key: the login page, as for the form itself
    with served.client() as c:
        plain = c.post("/review/nope/approve", data={"note": "x"})
        bad = c.post("/review/nope/approve?bogus=1", data={"note": "x"})
        assert plain.status_code == bad.status_code == 401
        assert 'action="/login"' in bad.text and "Bad address" not in bad.text
    # the login page needs no key: its own bad address is shown at once (no loop to itself)
    with served.client() as c:
        r = c.get("/login", params={"next": "/", "bogus": "1"})
        assert "'bogus': this page takes next" in _inspector_page(r, 422)


def test_a_bad_address_counts_against_the_key_s_rate_limit(tmp_path: Path) -> None:
    """A bad address checks the key as the page does, rate limit included: with a burst of
    two requests, the login and one bad address take them, and the next is refused as any
    page would be (429), not shown as a bad address."""
    app = create_app(ServiceConfig(str(tmp_path / "data"), admin_key=ADMIN_KEY, rate=1e-6, burst=2))
    with running(app) as url:
        with httpx.Client(base_url=url, timeout=60) as admin:
            keys = _tenants(admin, ("acme",))
        served = Served(url, keys, "")
        with served.client(keys["acme"]) as c:  # the login takes the first
            assert "Bad address" in _inspector_page(c.get("/runtime?x=1"), 422)
            r = c.get("/runtime?x=1")
            assert "too many requests for this key" in _inspector_page(r, 429)
            assert "retry-after" in r.headers
            assert "Bad address" not in r.text


# -- the browser --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def test_chromium_gets_the_html_404_page_and_logs_in_before_a_bad_address(
    served: Served, browser: Any
) -> None:
    context, page, failures = watched_page(browser, served.url, console=False)
    # an anonymous browser at a bad address is sent to log in first, then sees the page's error
    page.goto(served.url + "/runtime?stale=true")
    assert "/login" in page.url
    page.fill("input[name=key]", served.keys["acme"])
    page.click("button[type=submit]")
    page.wait_for_url(served.url + "/runtime?stale=true")
    assert page.text_content("h1") == "Bad address"
    assert "this page takes no query parameters" in (page.text_content("[data-testid=error]") or "")
    assert page.text_content("[data-testid=tenant]") == "acme"

    # a typo in the address: the inspector's 404 page, styled by its own stylesheet
    response = page.goto(served.url + "/runtmie")
    assert response is not None and response.status == 404
    assert response.headers["content-type"].startswith("text/html")
    assert page.title() == "Page not found · vigente"
    assert page.text_content("h1") == "Page not found"
    assert page.text_content("[data-testid=error]") == "there is no page /runtmie in the inspector"
    # the layout's own stylesheet was loaded and applies (the page is not the bare error text)
    assert page.evaluate("document.styleSheets.length") == 1
    assert page.evaluate("document.styleSheets[0].cssRules.length") > 0
    with page.expect_navigation():
        page.click("[data-testid=suggestion] a")
    assert page.url == served.url + "/runtime"
    assert page.locator("[data-testid=conversations] a").count() >= 1

    page.goto(served.url + "/runtime/nope")
    with page.expect_navigation():
        page.click("[data-testid=start-page]")
    assert page.url == served.url + "/"
    assert page.text_content("[data-testid=tenant]") == "acme"
    context.close()
    assert failures == []

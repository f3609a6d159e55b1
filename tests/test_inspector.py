"""The web inspector through a real uvicorn server on loopback: its pages with an httpx client
(everywhere), and clicked through end to end in a real browser (Playwright driving Debian's
Chromium; skipped, saying why, only when Chromium is not installed).

The store is seeded with the seed examples: the upload limit of ``vigente demo`` (three ingest
events and a conflicting second source), the two circulars of the document lineage ``cdd``, bare
documents in the review queue, and the runtime conversation of the branch-isolation scenario
with an assembly per branch. What a page shows is checked against the public API's own answer.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html import escape as html_escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from rich.console import Console

from tests.browser import chromium, watched_page
from tests.conftest import TEST_DATA
from tests.http_server import running
from vigente import Vigente
from vigente.demo import LINEAGE, run_demo
from vigente.evidence.documents import NewVersion
from vigente.http import ServiceConfig, create_app
from vigente.http.inspector._timeline import Span, layout
from vigente.store.tenancy import TenantStores

ADMIN_KEY = "test-admin-key-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
DOCS = TEST_DATA / "documents"
SCENARIO = TEST_DATA / "scenarios" / "branch_isolation.jsonl"


@dataclass
class Inspector:
    url: str
    root: str
    key: str
    other_key: str
    assemblies: list[str]

    def store(self, tenant: str = "acme") -> Vigente:
        """The tenant's store, opened beside the server (SQLite allows both)."""
        return Vigente.open(TenantStores(self.root).tenant_url(tenant))

    @contextmanager
    def client(self, key: str | None = None) -> Iterator[httpx.Client]:
        """A client logged in with ``key`` (its cookie), or none."""
        with httpx.Client(base_url=self.url, timeout=60, follow_redirects=False) as client:
            if key is not None:
                r = client.post("/login", data={"key": key, "next": "/"})
                assert r.status_code == 303, r.text
            yield client


def _seed(vg: Vigente) -> list[str]:
    """The seed examples in a tenant's store; the ids of its two assemblies."""
    run_demo(vg, Console(file=io.StringIO()))
    vg.documents.add(
        NewVersion.from_dict(
            {
                "lineage_id": "cdd",
                "text": (DOCS / "en_circular_7_2023.md").read_text(encoding="utf-8"),
                "reference": "Circular 7/2023",
                "valid_from": "2023-06-01",
                "published": "2023-05-12",
                "source_url": "https://example.org/c7",
            }
        )
    )
    vg.documents.add(
        NewVersion.from_dict(
            {
                "lineage_id": "cdd",
                "text": (DOCS / "en_circular_12_2025.md").read_text(encoding="utf-8"),
                "reference": "Circular 12/2025",
                "valid_from": "2025-03-03",
                "published": "2025-02-14",
                "relation": "supersedes",
                "predecessor": "Circular 7/2023",
            }
        )
    )
    events = [
        line
        for line in SCENARIO.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["event"] != "expect"
    ]
    vg.runtime.import_events(events)
    first = vg.assembly.assemble("s", "main", "agent")
    second = vg.assembly.assemble("s", "alt", "agent", mode="branch_send")
    return [first.id, second.id]


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspector]:
    root = str(tmp_path_factory.mktemp("inspector") / "data")
    app = create_app(ServiceConfig(root, admin_key=ADMIN_KEY, rate=1000, burst=1000))
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as admin:
        keys = {}
        for tenant in ("acme", "other"):
            r = admin.post("/v1/admin/tenants", json={"name": tenant}, headers=ADMIN)
            assert r.status_code == 201, r.text
            r = admin.post(f"/v1/admin/tenants/{tenant}/keys",
                json={"role": "service"}, headers=ADMIN)
            assert r.status_code == 201, r.text
            keys[tenant] = r.json()["key"]
        stores = TenantStores(root)
        with Vigente.open(stores.tenant_url("acme")) as vg:
            assemblies = _seed(vg)
        with Vigente.open(stores.tenant_url("other")) as vg:
            vg.record(
                "other/secret-limit",
                7,
                valid_from="2026-01-01",
                known_at="2026-01-01",
                source="other-policy",
            )
        yield Inspector(url, root, keys["acme"], keys["other"], assemblies)


def _submit(inspector: Inspector, name: str) -> str:
    with inspector.store() as vg:
        return vg.review.submit(
            (DOCS / name).read_text(encoding="utf-8"), filename=name
        ).proposal_id


def _text(html: str) -> str:
    """The page's text without tags and with entities read, whitespace collapsed."""
    import html as html_lib

    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", html)))


def _at_any_minute(text: str) -> str:
    """``text`` with the minute of "as known now (…)" left out: a page drawn a moment after the
    expected answer may fall in the next minute."""
    return re.sub(r"as known now \([^)]*\)", "as known now", text)


# -- the timeline's geometry ---------------------------------------------------------------------
_DAY = 86_400_000_000


@st.composite
def _spans(draw: st.DrawFn) -> list[Span]:
    spans = []
    for i in range(draw(st.integers(1, 6))):
        vf, kf = draw(st.integers(0, 400)), draw(st.integers(0, 400))
        vt = draw(st.one_of(st.none(), st.integers(vf + 1, 500)))
        kt = draw(st.one_of(st.none(), st.integers(kf + 1, 500)))
        spans.append(
            Span(
                str(i),
                f"v{i}",
                "s",
                vf * _DAY,
                None if vt is None else vt * _DAY,
                kf * _DAY,
                None if kt is None else kt * _DAY,
                "",
            )
        )
    return spans


@settings(max_examples=200, deadline=None)
@given(spans=_spans(), t=st.integers(0, 500), k=st.integers(0, 500))
def test_a_point_is_drawn_inside_exactly_the_snapshots_that_hold_it(
    spans: list[Span], t: int, k: int
) -> None:
    """On the chart, (t, k) falls inside a snapshot's rectangle exactly when t is in its valid
    interval and k in its known interval (half-open), away from the edges' rounding."""
    tl = layout(spans, point=(t * _DAY, k * _DAY), now=500 * _DAY)
    assert tl.point is not None
    x, y = tl.point
    left, top = tl.left, tl.top
    assert left <= x <= left + tl.plot_width and top <= y <= top + tl.plot_height
    for span, box in zip(spans, tl.boxes, strict=True):
        near = min(
            abs(x - box.x), abs(x - box.x - box.width), abs(y - box.y), abs(y - box.y - box.height)
        )
        assume(near > 0.5)
        inside = box.x < x < box.x + box.width and box.y < y < box.y + box.height
        holds = span.valid_from <= t * _DAY < (span.valid_to or 10**18) and (
            span.known_from <= k * _DAY < (span.known_to or 10**18)
        )
        assert inside == holds, (span, box, tl.point)


# -- httpx: authentication ----------------------------------------------------------------------
def test_pages_need_a_tenant_key_and_keep_it_in_an_httponly_cookie(inspector: Inspector) -> None:
    with inspector.client() as c:
        r = c.get("/lineage?name=cdd")
        assert r.status_code == 303
        assert r.headers["location"] == "/login?next=" + quote("/lineage?name=cdd", safe="")
        assert c.get("/login").status_code == 200
        bad = c.post("/login", data={"key": "vgk_0123456789abcdef_" + "x" * 43})
        assert bad.status_code == 401
        assert "unknown or revoked API key" in _text(bad.text)
        admin = c.post("/login", data={"key": ADMIN_KEY})
        assert admin.status_code == 403
        assert "tenant's API key" in _text(admin.text)
        # a page asked with the admin key in the header is refused too
        assert c.get("/", headers=ADMIN).status_code == 403
        good = c.post("/login", data={"key": inspector.key, "next": "/review"})
        assert good.status_code == 303 and good.headers["location"] == "/review"
        cookie = good.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
        assert inspector.key.lower() in cookie
        # a next= that leaves the site is replaced by the home page
        away = c.post("/login", data={"key": inspector.key, "next": "//evil.example/x"})
        assert away.headers["location"] == "/"
        assert c.get("/").status_code == 200
        out = c.post("/logout")
        assert out.status_code == 303
        assert c.get("/").status_code == 303
    # the same header as the API works without a cookie
    with inspector.client() as c:
        r = c.get("/", headers={"Authorization": f"Bearer {inspector.key}"})
        assert r.status_code == 200
        assert "acme" in _text(r.text)


def test_a_revoked_key_stops_working_at_once(inspector: Inspector) -> None:
    with httpx.Client(base_url=inspector.url, timeout=60) as admin:
        made = admin.post(
            "/v1/admin/tenants/acme/keys",
                json={"label": "soon revoked", "role": "service"}, headers=ADMIN
        ).json()
    with inspector.client(made["key"]) as c:
        assert c.get("/").status_code == 200
        with httpx.Client(base_url=inspector.url, timeout=60) as admin:
            r = admin.delete(f"/v1/admin/keys/{made['key_id']}", headers=ADMIN)
            assert r.status_code == 200, r.text
        r = c.get("/")
        assert r.status_code == 401
        assert "unknown or revoked API key" in _text(r.text)
        assert 'vigente_key=""' in r.headers["set-cookie"] or "max-age=0" in (
            r.headers["set-cookie"].lower()
        )


def test_a_tenant_sees_only_its_own_data(inspector: Inspector) -> None:
    proposal = _submit(inspector, "en_no_dates.txt")
    with inspector.client(inspector.other_key) as c:
        home = _text(c.get("/").text)
        assert "other/secret-limit" in home
        assert LINEAGE not in home and "cdd" not in home
        assert c.get("/lineage", params={"name": "cdd"}).status_code == 404
        assert c.get("/lineage", params={"name": LINEAGE}).status_code == 404
        assert c.get("/runtime/conversation", params={"id": "s"}).status_code == 404
        assert c.get(f"/assembly/{inspector.assemblies[0]}").status_code == 404
        assert c.get(f"/review/{proposal}").status_code == 404
        assert proposal not in c.get("/review").text
        refused = c.post(f"/review/{proposal}/reject", data={"note": "not mine"})
        assert refused.status_code == 404
        search = c.get("/search", params={"q": "customer due diligence", "t": "2025-02-20"})
        assert "Circular 7/2023" not in search.text
    with inspector.store() as vg:
        assert vg.review.show(proposal).status == "pending"
    with inspector.client(inspector.key) as c:
        assert "other/secret-limit" not in c.get("/").text


# -- httpx: the pages show what the API says ----------------------------------------------------
def test_every_page_is_served_with_its_own_assets_only(inspector: Inspector) -> None:
    proposal = _submit(inspector, "en_notice_amending.txt")
    pages = [
        "/",
        f"/lineage?name={quote(LINEAGE)}",
        "/lineage?name=cdd&t=2025-02-20",
        "/search?q=customer+due+diligence&t=2025-02-20",
        "/runtime",
        "/runtime/conversation?id=s",
        f"/assembly/{inspector.assemblies[1]}",
        "/review",
        f"/review/{proposal}",
    ]
    with inspector.client(inspector.key) as c:
        for path in pages:
            r = c.get(path)
            assert r.status_code == 200, (path, r.text[:500])
            assert r.headers["content-type"].startswith("text/html")
            csp = r.headers["content-security-policy"]
            assert "default-src 'self'" in csp and "script-src 'self'" in csp
            # every script, stylesheet and form stays on this server: no CDN
            for attr in re.findall(r'(?:src|href|action)="([^"]*)"', r.text):
                assert attr.startswith(("/", "#")) or attr == "data:,", (path, attr)
        for asset in ("/static/inspector.css", "/static/inspector.js"):
            r = c.get(asset)
            assert r.status_code == 200 and r.text.strip(), asset
        # the pages are not part of the API's OpenAPI document
        paths = c.get("/openapi.json").json()["paths"]
        assert not any(p in paths for p in ("/", "/lineage", "/search", "/review", "/login"))


def test_the_lineage_timeline_draws_every_snapshot_and_the_evidence_at_t_k(
    inspector: Inspector,
) -> None:
    with inspector.store() as vg:
        history = vg.history(LINEAGE)
        expected = vg.evidence(LINEAGE, valid_at="2026-09-02", known_at="2026-09-02")
    with inspector.client(inspector.key) as c:
        r = c.get("/lineage", params={"name": LINEAGE, "t": "2026-09-02", "k": "2026-09-02"})
        assert r.status_code == 200
    html = r.text
    svg = html[html.index('<svg id="timeline"') : html.index("</svg>", html.index('id="timeline"'))]
    drawn = re.findall(r'<g class="snapshot( admitted)?" data-snapshot="([^"]+)"', svg)
    assert sorted(s for _, s in drawn) == sorted(v.version_id for v in history)
    admitted = sorted(s for flag, s in drawn if flag)
    assert admitted == sorted(v.version_id for v in expected.admitted)
    assert 'data-testid="point"' in svg
    text = _text(html)
    assert expected.status.value == "supported" and expected.values == (50,)
    assert f"{expected.status.value} {expected.interpretation.value}" in text
    assert _text(expected.statement) in text
    # each exclusion is listed with its reason
    for exclusion in expected.excluded:
        assert exclusion.reason.value in text
    # the chain as known on k: each value with its source, in valid-time order
    chain = html[html.index('data-testid="chain"') :]
    assert "policy, valid from 2026-01-01" in _text(chain)


def test_a_conflict_and_the_document_chain_with_citations(inspector: Inspector) -> None:
    with inspector.store() as vg:
        conflict = vg.evidence(LINEAGE, valid_at="2026-09-29", known_at="2026-09-29")
        feb = vg.documents.evidence("cdd", valid_at="2025-02-20")
        march = vg.documents.evidence("cdd", valid_at="2025-03-03")
    with inspector.client(inspector.key) as c:
        text = _text(
            c.get("/lineage", params={"name": LINEAGE, "t": "2026-09-29", "k": "2026-09-29"}).text
        )
        assert conflict.status.value == "conflict"
        assert "conflict" in text and "80" in text and "90" in text
        assert _text(conflict.statement) in text
        html = c.get("/lineage", params={"name": "cdd", "t": "2025-02-20"}).text
    text = _text(html)
    assert _at_any_minute(_text(feb.statement)) in _at_any_minute(text)
    chain = _text(html[html.index('data-testid="chain"') :])
    for row in (*feb.admitted, *march.admitted):
        assert _text(row.citation) in chain
    assert "not_yet_valid" in text  # Circular 12/2025 on 2025-02-20


def test_a_bad_date_is_shown_on_the_page_not_a_500(inspector: Inspector) -> None:
    with inspector.client(inspector.key) as c:
        r = c.get("/lineage", params={"name": LINEAGE, "t": "2026-13-01"})
        assert r.status_code == 400
        assert "is not a calendar date" in _text(r.text)
        r = c.get("/search", params={"q": "limit", "t": "yesterday-ish"})
        assert r.status_code == 400 and 'data-testid="error"' in r.text
        r = c.get("/lineage", params={"name": "no/such"})
        assert r.status_code == 404 and "no lineage" in _text(r.text)


def test_search_shows_admitted_hits_and_exclusions_with_reasons(inspector: Inspector) -> None:
    with inspector.store() as vg:
        expected = vg.retrieval.search(
            "customer due diligence remote onboarding", valid_at="2025-02-20"
        )
    assert expected.hits and expected.excluded
    with inspector.client(inspector.key) as c:
        r = c.get(
            "/search", params={"q": "customer due diligence remote onboarding", "t": "2025-02-20"}
        )
    assert r.status_code == 200
    html = r.text
    hits = html[html.index('data-testid="hits"') : html.index('data-testid="search-excluded"')]
    assert hits.count("<li>") == len(expected.hits)
    for hit in expected.hits:
        assert _text(hit.citation or "") in _text(hits)
    excluded = _text(html[html.index('data-testid="search-excluded"') :])
    for e in expected.excluded:
        assert e.version_id in excluded and e.reason in excluded


def test_runtime_pages_show_branches_runs_and_assemblies(inspector: Inspector) -> None:
    first, second = inspector.assemblies
    with inspector.store() as vg:
        record = vg.assembly.explain(second)
        diff = vg.assembly.diff(first, second)
        why = vg.assembly.why_not(first, "t2")
    with inspector.client(inspector.key) as c:
        conv = c.get("/runtime/conversation", params={"id": "s"}).text
        assert 'data-branch="main"' in conv and 'data-branch="alt"' in conv
        assert "forked from main after a1" in _text(conv)
        runs = _text(conv[conv.index('data-testid="runs"') :])
        assert "r1" in runs and "r2" in runs and "train_search" in runs
        assert first in conv and second in conv
        page = c.get(f"/assembly/{second}").text
        asked = c.get(f"/assembly/{first}", params={"why_not": "t2"}).text
        rebuilt = _text(c.get(f"/assembly/{second}", params={"rebuild": "1"}).text)
    with inspector.store() as vg:
        again = vg.assembly.rebuild(second)
    assert ("matches the stored selection" in rebuilt) is again["matches"]
    text = _text(page)
    included = _text(page[page.index('data-testid="included"') : page.index("Omitted (")])
    for d in record["included"]:
        assert f"{d['ref']} {d['kind']} {d['as']} {d['rule']}" in included
    for d in record["omitted"]:
        block = page[page.index(f'data-testid="omitted-{d["reason"]}"') :]
        assert d["ref"] in block
    tokens = record["tokens"]
    assert f"{tokens['assembled']} tokens ({tokens['encoding']}) against {tokens['replay']}" in text
    # the diff from the consecutive call before (the first assembly)
    summary = _text(page[page.index('data-testid="diff-summary"') :])
    assert f"tokens {diff['tokens'][0]} → {diff['tokens'][1]}" in summary
    for d in diff["added"]:
        assert f"added {d['ref']}" in summary
    for d in diff["removed"]:
        assert f"removed {d['ref']}" in summary
    assert why["reason"] == "other_branch"
    answer = _text(asked[asked.index('data-testid="why-not"') :])
    assert f"omitted: {why['reason']}" in answer and why["rule"] in answer
    _never_a_candidate_page(inspector.url, inspector.key, second)


def _never_a_candidate_page(url: str, key: str, assembly_id: str) -> None:
    """An id no record of the conversation has (the form's own placeholder, `t2`, in a
    conversation without it; here `t9`) is a page saying so, as CLI and HTTP why-not say."""
    with httpx.Client(base_url=url, timeout=60, headers={"accept": "text/html"}) as c:
        assert c.post("/login", data={"key": key, "next": "/"}).status_code == 303
        r = c.get(f"/assembly/{quote(assembly_id, safe='')}", params={"why_not": "t9"})
        assert r.status_code == 200, r.text[:500]
        assert r.headers["content-type"].startswith("text/html")
        text = _text(r.text)
        assert "t9 was never a candidate of this assembly" in text
        assert "never a candidate: no record of conversation 's' has this id" in text


def test_review_edit_approve_and_reject_through_forms(inspector: Inspector) -> None:
    notice = _submit(inspector, "en_notice_amending.txt")
    memo = _submit(inspector, "en_no_dates.txt")
    with inspector.client(inspector.key) as c:
        listed = c.get("/review").text
        assert notice in listed and memo in listed
        # the notice amends a predecessor this store does not hold: approving is refused
        refused = c.post(f"/review/{notice}/approve", data={"note": ""})
        assert refused.status_code == 400
        assert 'data-testid="error"' in refused.text
        r = c.post(
            f"/review/{notice}/edit",
            data={
                "published": "2025-02-20",
                "relation": "",
                "predecessor": "",
                "note": "no predecessor in this store",
            },
        )
        assert r.status_code == 303 and r.headers["location"] == f"/review/{notice}?done=edited"
        bad = c.post(f"/review/{notice}/edit", data={"valid_from": "2025-02-30"})
        assert bad.status_code == 400 and 'data-testid="error"' in bad.text
        # a form posted from another site is refused
        assert (
            c.post(
                f"/review/{notice}/approve", data={}, headers={"Origin": "https://evil.example"}
            ).status_code
            == 403
        )
        r = c.post(f"/review/{notice}/approve", data={"note": "checked"})
        assert r.status_code == 303
        done = c.get(r.headers["location"]).text
        assert "Approved: the version was added." in _text(done)
        # the document's text, with each proposed field's span marked
        page = c.get(f"/review/{notice}").text
        with inspector.store() as vg:
            proposed = vg.review.show(notice).proposal
        for name, field in proposed.fields.items():
            if field.span is not None:
                marked = f'data-field="{name}">{html_escape(field.span.text, quote=False)}</mark>'
                assert marked in page, name
        r = c.post(f"/review/{memo}/reject", data={"note": "not a regulation"})
        assert r.status_code == 303
    with inspector.store() as vg:
        approved = vg.review.show(notice)
        assert approved.status == "approved" and approved.version_id is not None
        version = vg.documents.get(approved.version_id)
        assert version.published.isoformat() == "2025-02-20" and version.relation is None
        assert vg.review.show(memo).status == "rejected"
        assert [e.note for e in vg.review.show(memo).events] == ["not a regulation"]
    assert approved.version_id in done


@pytest.mark.postgres
def test_every_page_on_postgresql(postgres_url: str) -> None:
    """The same pages over a PostgreSQL root (a schema per tenant)."""
    app = create_app(ServiceConfig(postgres_url, admin_key=ADMIN_KEY, rate=1000, burst=1000))
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as c:
        assert c.post("/v1/admin/tenants", json={"name": "acme"}, headers=ADMIN).status_code == 201
        key = c.post("/v1/admin/tenants/acme/keys",
            json={"role": "service"}, headers=ADMIN).json()["key"]
        with Vigente.open(TenantStores(postgres_url).tenant_url("acme")) as vg:
            first, second = _seed(vg)
            proposal = vg.review.submit(
                (DOCS / "en_notice_amending.txt").read_text(encoding="utf-8")
            ).proposal_id
            expected = vg.evidence(LINEAGE, valid_at="2026-09-02", known_at="2026-09-02")
        assert c.post("/login", data={"key": key}).status_code == 303
        for path in (
            "/",
            f"/lineage?name={quote(LINEAGE)}&t=2026-09-02&k=2026-09-02",
            "/lineage?name=cdd&t=2025-02-20",
            "/search?q=customer+due+diligence&t=2025-02-20",
            "/runtime",
            "/runtime/conversation?id=s",
            f"/assembly/{second}?why_not=u3",
            "/review",
            f"/review/{proposal}",
        ):
            r = c.get(path)
            assert r.status_code == 200, (path, r.text[:500])
        page = _text(c.get(f"/lineage?name={quote(LINEAGE)}&t=2026-09-02&k=2026-09-02").text)
        assert _text(expected.statement) in page
        _never_a_candidate_page(url, key, second)
        assert first in c.get("/runtime/conversation?id=s").text
        r = c.post(f"/review/{proposal}/reject", data={"note": "on PostgreSQL"})
        assert r.status_code == 303
        assert "rejected" in c.get(r.headers["location"]).text


# -- the browser --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where the screenshots of a browser test go (in the test's own output folder)."""
    folder = tmp_path / "screenshots"
    folder.mkdir()
    return folder


def test_click_through_every_page_in_chromium(
    inspector: Inspector, browser: Any, shots: Path
) -> None:
    notice = _submit(inspector, "en_notice_amending.txt")
    memo = _submit(inspector, "en_no_dates.txt")
    first, second = inspector.assemblies
    context, page, failures = watched_page(browser, inspector.url)

    taken: list[str] = []

    def shot(name: str) -> None:
        taken.append(f"{len(taken):02d}-{name}.png")
        page.screenshot(path=str(shots / taken[-1]), full_page=True)

    # log in: the page asked for comes back after the key
    page.goto(inspector.url + "/")
    assert "/login" in page.url
    shot("login")
    page.fill("input[name=key]", inspector.key)
    page.click("button[type=submit]")
    page.wait_for_url(inspector.url + "/")
    assert page.text_content("[data-testid=tenant]") == "acme"
    assert not [c for c in context.cookies() if c["name"] == "vigente_key" and not c["httpOnly"]]
    assert page.evaluate("document.cookie") == ""  # the key is out of the page's reach
    shot("lineages")

    # the fact lineage: click a point of the chart to pick (t, k)
    page.click(f"text={LINEAGE}")
    page.wait_for_selector("[data-testid=timeline]")
    shot("lineage-now")
    with inspector.store() as vg:
        # the snapshot of 80 MB as held between learning it and the 100 MB announcement
        target = next(v for v in vg.history(LINEAGE) if v.value == 80 and v.known_to)
    rect = page.locator(f'g.snapshot[data-snapshot="{target.version_id}"] rect').bounding_box()
    assert rect is not None
    with page.expect_navigation():
        page.mouse.click(rect["x"] + rect["width"] / 2, rect["y"] + rect["height"] / 2)
    picked = dict(re.findall(r"[?&]([tk])=([0-9-]+)", page.url))
    assert set(picked) == {"t", "k"}
    with inspector.store() as vg:
        expected = vg.evidence(LINEAGE, valid_at=picked["t"], known_at=picked["k"])
    # a point inside a snapshot's rectangle is a (t, k) at which that snapshot is admitted
    assert target.version_id in {v.version_id for v in expected.admitted}
    assert page.input_value("#pick-t") == picked["t"]
    assert page.text_content("[data-testid=status]") == expected.status.value
    assert _text(page.text_content("[data-testid=statement]") or "") == _text(expected.statement)
    admitted = page.locator("g.snapshot.admitted")
    assert sorted(
        admitted.nth(i).get_attribute("data-snapshot") or "" for i in range(admitted.count())
    ) == sorted(v.version_id for v in expected.admitted)
    shot("lineage-picked")

    # the (t, k) form
    page.fill("#pick-t", "2026-09-29")
    page.fill("#pick-k", "2026-09-29")
    with page.expect_navigation():
        page.click("[data-testid=picker] button[type=submit]")
    assert page.text_content("[data-testid=status]") == "conflict"
    shot("lineage-conflict")

    # the document lineage and its chain
    page.click("nav >> text=Lineages")
    page.click("text=cdd")
    page.fill("#pick-t", "2025-02-20")
    with page.expect_navigation():
        page.click("[data-testid=picker] button[type=submit]")
    citations = page.locator("[data-testid=citation]").all_text_contents()
    assert any("replacing Circular 7/2023" in c for c in citations)
    assert any(c.startswith("Circular 7/2023") for c in citations)
    shot("document-chain")

    # search with a reference date
    page.click("nav >> text=Search")
    page.fill("input[name=q]", "customer due diligence remote onboarding")
    page.fill("input[name=t]", "2025-02-20")
    with page.expect_navigation():
        page.click("[data-testid=search-form] button[type=submit]")
    assert page.locator("[data-testid=hits] > li").count() >= 1
    assert "not_yet_valid" in (page.text_content("[data-testid=search-excluded]") or "")
    shot("search")

    # runtime: conversation, branches and runs, then each assembly
    page.click("nav >> text=Runtime")
    shot("runtime")
    page.click('[data-testid=conversations] a:text-is("s")')
    page.wait_for_selector("[data-testid=branches]")
    assert page.locator(".lane").count() == 2
    shot("conversation")
    page.click(f"text={second}")
    page.wait_for_selector("[data-testid=included]")
    assert "removed" in (page.text_content("[data-testid=diff]") or "")
    shot("assembly")
    page.fill("[data-testid=why-not-form] input[name=why_not]", "u3")
    with page.expect_navigation():
        page.click("[data-testid=why-not-form] button[type=submit]")
    assert "other_branch" in (page.text_content("[data-testid=why-not]") or "")
    shot("why-not")
    with page.expect_navigation():
        page.click("[data-testid=rebuild-form] button[type=submit]")
    assert "matches" in (page.text_content("[data-testid=rebuilt]") or "")
    shot("rebuild")
    page.click("text=← previous call")
    page.wait_for_url(re.compile(re.escape(first)))
    assert "only recorded model call" not in page.content()
    shot("assembly-first")

    # review: edit, approve, reject
    page.click("nav >> text=Review")
    shot("review")
    page.click(f"text={notice}")
    page.fill("[data-testid=edit-form] input[name=published]", "2025-02-20")
    page.fill("[data-testid=edit-form] input[name=relation]", "")
    page.fill("[data-testid=edit-form] input[name=predecessor]", "")
    with page.expect_navigation():
        page.click("[data-testid=edit-form] button[type=submit]")
    assert page.text_content("[data-testid=done]") == "Saved."
    shot("review-edited")
    with page.expect_navigation():
        page.click("[data-testid=approve-form] button[type=submit]")
    assert page.text_content("[data-testid=proposal-status]") == "approved"
    shot("review-approved")
    page.goto(f"{inspector.url}/review/{memo}")
    with page.expect_navigation():
        page.click("[data-testid=reject-form] button[type=submit]")
    assert page.text_content("[data-testid=proposal-status]") == "rejected"
    shot("review-rejected")

    page.click("text=Log out")
    page.wait_for_url(re.compile("/login"))
    shot("logged-out")
    context.close()
    assert failures == []
    assert sorted(p.name for p in shots.iterdir()) == taken
    assert all((shots / n).stat().st_size > 1000 for n in taken)

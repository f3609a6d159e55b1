"""The inspector's conversation and assembly pages (issue 21, item 9): each record's text
(escaped) and knowledge time, what each assembly included and left out, the fork rule named
for what it is, no "None" on a document without a source, and the call links separated."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.http_server import running
from vigente import Vigente
from vigente.evidence.documents import NewVersion
from vigente.http import ServiceConfig, create_app
from vigente.store.tenancy import TenantStores

ADMIN_KEY = "test-admin-key-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
MEMORY_EVENTS = [
    {"event": "participant", "conversation": "c", "id": "agent2", "model": "m"},
    {"event": "run", "conversation": "c", "id": "r1", "branch": "alt", "participant": "agent",
     "mode": "chat", "at": "2026-10-05T08:04:00Z"},
    {"event": "tool_call", "conversation": "c", "id": "t1", "run": "r1", "name": "trains",
     "arguments": {"from": "TRN"}},
    {"event": "tool_result", "conversation": "c", "call": "t1", "status": "succeeded",
     "content": {"trains": [{"id": "IC-0660"}]}},
    {"event": "tool_call", "conversation": "c", "id": "t2", "run": "r1", "name": "weather",
     "arguments": {"city": "MIL"}, "at": "2026-10-05T08:05:00Z"},
    {"event": "tool_result", "conversation": "c", "call": "t2", "status": "succeeded",
     "content": {"sky": "clear"}},
]
EVENTS = [
    {"event": "conversation", "id": "c", "account": "a", "at": "2026-10-05T08:00:00Z"},
    {"event": "participant", "conversation": "c", "id": "agent", "model": "m"},
    {"event": "branch", "conversation": "c", "id": "main"},
    {"event": "message", "conversation": "c", "id": "m1", "branch": "main", "role": "user",
     "content": "Is <script>alert(1)</script> a train?"},
    {"event": "branch", "conversation": "c", "id": "alt", "parent": "main", "fork_after": "m1",
     "at": "2026-10-05T08:01:00Z"},
    {"event": "message", "conversation": "c", "id": "m2", "branch": "main", "role": "user",
     "content": "Only on main, after the fork.", "at": "2026-10-05T08:02:00Z"},
    {"event": "message", "conversation": "c", "id": "a1", "branch": "alt", "role": "user",
     "content": "On alt.", "at": "2026-10-05T08:03:00Z"},
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, list[str]]]:
    root = str(tmp_path_factory.mktemp("inspector-conv") / "data")
    app = create_app(ServiceConfig(root, admin_key=ADMIN_KEY, rate=1000, burst=1000))
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.post("/v1/admin/tenants", json={"name": "acme"},
                           headers=ADMIN).status_code == 201
        key = client.post("/v1/admin/tenants/acme/keys",
            json={"role": "service"}, headers=ADMIN).json()["key"]
        with Vigente.open(TenantStores(root).tenant_url("acme")) as vg:
            vg.runtime.import_events([json.dumps(e) for e in EVENTS + MEMORY_EVENTS])
            ids = [vg.assembly.assemble("c", "alt", "agent").id,
                   vg.assembly.assemble("c", "alt", "agent").id,
                   vg.assembly.assemble("c", "alt", "agent").id]
            vg.documents.add(NewVersion.from_dict({
                "lineage_id": "cdd", "text": "Customer due diligence.", "reference": "C 7/2023",
                "valid_from": "2023-06-01", "published": "2023-05-12"}))  # no source_url
        assert client.post("/login", data={"key": key, "next": "/"}).status_code == 303
        yield client, ids


def test_the_conversation_page_shows_text_knowledge_time_and_selection(
    site: tuple[httpx.Client, list[str]],
) -> None:
    client, _ = site
    page = client.get("/runtime/conversation", params={"id": "c"})
    assert page.status_code == 200, page.text
    html = page.text
    assert "Is &lt;script&gt;alert(1)&lt;/script&gt; a train?" in html  # the text, escaped
    assert "<script>alert(1)" not in html
    assert 'datetime="2026-10-05T08:02:00Z"' in html  # each record's knowledge time
    assert "what this call included and left out" in html
    assert "− <code>m2</code>" in html  # main's message after the fork is left out …
    assert "branch.after_fork_point:main" in html  # … by a rule named for what it is
    assert "branch.not_in_ancestry:main" not in html


def test_no_page_prints_none(site: tuple[httpx.Client, list[str]]) -> None:
    client, ids = site
    for path, params in (("/lineage", {"name": "cdd"}), ("/runtime/conversation", {"id": "c"}),
                         (f"/assembly/{ids[1]}", {})):
        html = client.get(path, params=params).text
        assert ">None<" not in html and ": None" not in html and " None " not in html, path


def test_the_call_links_are_separated(site: tuple[httpx.Client, list[str]]) -> None:
    client, ids = site
    html = client.get(f"/assembly/{ids[1]}").text
    start = html.index('<nav class="calls"')
    nav = html[start:html.index("</nav>", start)]
    assert 'rel="prev"' in nav and 'rel="next"' in nav and " · " in nav
    assert "previous callnext call" not in html.replace("\n", "").replace(" ", "")


def test_the_memories_are_drawn_on_both_axes(site: tuple[httpx.Client, list[str]]) -> None:
    """The same two-axis view as a lineage's: each memory fresh across, known up; the last
    assembly's snapshot is the point, and what it included is outlined."""
    client, _ = site
    html = client.get("/runtime/conversation", params={"id": "c"}).text
    start = html.index('<svg id="memory-timeline"')
    svg = html[start:html.index("</svg>", start)]
    assert svg.count('class="snapshot') == 2  # t1#memory and t2#memory
    assert 'data-snapshot="t1#memory"' in svg and 'data-snapshot="t2#memory"' in svg
    assert 'data-testid="point"' in svg and "admitted" in svg


def test_the_memory_view_renders_in_chromium(site: tuple[httpx.Client, list[str]]) -> None:
    from tests.browser import chromium, watched_page

    client, _ = site
    origin = str(client.base_url).rstrip("/")
    key = client.cookies.get("vigente_key")
    with chromium() as browser:
        context, page, failures = watched_page(browser, origin)
        context.add_cookies([{"name": "vigente_key", "value": key or "", "url": origin}])
        page.goto(f"{origin}/runtime/conversation?id=c")
        boxes = page.locator("#memory-timeline g.snapshot rect")
        assert boxes.count() == 2
        for i in range(2):
            box = boxes.nth(i).bounding_box()
            assert box is not None and box["width"] > 1 and box["height"] > 1
        assert page.locator("#memory-timeline [data-testid=point] circle").count() == 1
        assert failures == []
        context.close()

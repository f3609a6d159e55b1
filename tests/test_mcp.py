"""The MCP server with the SDK's own client: over stdio (``vigente mcp`` in a subprocess) and
over streamable HTTP (mounted by the HTTP API on a real uvicorn server, with tenant keys)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.http_server import mcp_over_http, running, tool_text
from vigente import Vigente
from vigente.evidence.documents import NewVersion
from vigente.http import ServiceConfig, create_app

TOOLS = {
    "ask_evidence",
    "search",
    "cite",
    "record_fact",
    "verify_answer",
    "record_event",
    "assemble_context",
    "explain_assembly",
    "recall_memory",
}
ADMIN_KEY = "mcp-admin-key-0123456789abcdef"


def _seed(path: Path) -> None:
    with Vigente.open(path) as vg:
        vg.record(
            "svc/upload-limit-mb",
            80,
            valid_from="2026-09-01",
            known_at="2026-09-03",
            source="policy",
        )
        vg.documents.add(
            NewVersion(
                lineage_id="cdd",
                text="Due diligence for uploads.",
                reference="Circular 7/2023",
                valid_from="2023-06-01",
                published="2023-05-12",
            )
        )
        vg.documents.add(
            NewVersion(
                lineage_id="cdd",
                text="Due diligence, new rules.",
                reference="Circular 12/2025",
                valid_from="2025-03-03",
                published="2025-02-14",
                relation="supersedes",
                predecessor="Circular 7/2023",
            )
        )


def _vigente_command() -> list[str]:
    script = Path(sys.executable).with_name("vigente")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from vigente.cli import main; main()"]


def _run(
    session: Callable[[Client], Awaitable[None]], server: Any, token: str | None = None
) -> None:
    """Connect the SDK's client to ``server`` (stdio parameters, or the URL of an HTTP server
    with the tenant key ``token``) and run ``session`` with it."""

    async def main() -> None:
        if token is None:
            async with Client(server, read_timeout_seconds=60) as client:
                await session(client)
            return
        await mcp_over_http(server, token, session)

    anyio.run(main)


async def _exercise_tools(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 80
        assert tool.input_schema["type"] == "object" and tool.input_schema["properties"]
        assert "ctx" not in tool.input_schema["properties"]
    assert tools["record_fact"].input_schema["required"] == [
        "lineage",
        "value",
        "valid_from",
        "source",
    ]

    ask = await client.call_tool(
        "ask_evidence", {"lineage": "svc/upload-limit-mb", "valid_at": "2026-09-10"}
    )
    assert not ask.is_error, tool_text(ask)
    assert ask.structured_content["status"] == "supported"
    assert ask.structured_content["values"] == [80]

    fact = {
        "lineage": "svc/upload-limit-mb",
        "value": 100,
        "valid_from": "2026-10-01",
        "known_at": "2026-09-25",
        "source": "policy",
    }
    # a model records what it learns now: a fact it dates in the past is refused
    behind = await client.call_tool("record_fact", fact)
    assert behind.is_error and "a model records what it learns now" in tool_text(behind)
    ahead = await client.call_tool("record_fact", {**fact, "known_at": "9999-12-31"})
    assert ahead.is_error and "after the store's clock" in tool_text(ahead)
    now = dt.datetime.now(dt.UTC).isoformat()
    wrote = await client.call_tool("record_fact", {**fact, "known_at": now})
    assert not wrote.is_error and wrote.structured_content["changed"] is True
    later = await client.call_tool(
        "ask_evidence", {"lineage": "svc/upload-limit-mb", "valid_at": "2026-10-05"}
    )
    assert later.structured_content["values"] == [100]

    cited = await client.call_tool("cite", {"lineage": "cdd", "valid_at": "2025-02-20"})
    [citation] = cited.structured_content["citations"]
    assert citation["reference"] == "Circular 7/2023"
    assert citation["superseded_by"] == "Circular 12/2025"
    assert "superseded on 3 March 2025 by Circular 12/2025" in citation["citation"]

    found = await client.call_tool(
        "search", {"query": "due diligence uploads", "valid_at": "2024-01-01"}
    )
    hits = found.structured_content["hits"]
    assert [h["reference"] for h in hits] == ["Circular 7/2023"]

    verdict = await client.call_tool(
        "verify_answer",
        {
            "answer": "The upload limit is 100 MB.",
            "lineage": "svc/upload-limit-mb",
            "valid_at": "2026-09-10",
        },
    )
    assert verdict.structured_content["passed"] is False
    assert verdict.structured_content["findings"][0]["code"] == "value_not_admitted"

    bad = await client.call_tool(
        "ask_evidence", {"lineage": "svc/upload-limit-mb", "valid_at": "2026-13-40"}
    )
    assert bad.is_error and "YYYY-MM-DD" in tool_text(bad)
    future = await client.call_tool(
        "record_fact",
        {
            "lineage": "x",
            "value": 1,
            "valid_from": "2026-01-01",
            "known_at": "2999-01-01",
            "source": "s",
        },
    )
    assert future.is_error and "nothing can be known from the future" in tool_text(future)

    templates = {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    assert templates == {"vigente://lineages{?kind}", "vigente://lineages/{+lineage}"}
    index = json.loads((await client.read_resource("vigente://lineages")).contents[0].text)
    assert {(x["lineage"], x["kind"]) for x in index["lineages"]} == {
        ("svc/upload-limit-mb", "fact"),
        ("cdd", "document"),
    }
    docs = json.loads(
        (await client.read_resource("vigente://lineages?kind=document")).contents[0].text
    )
    assert [x["uri"] for x in docs["lineages"]] == ["vigente://lineages/cdd"]
    history = json.loads(
        (await client.read_resource("vigente://lineages/svc/upload-limit-mb")).contents[0].text
    )
    assert history["kind"] == "fact" and len(history["versions"]) == 3
    versions = json.loads((await client.read_resource("vigente://lineages/cdd")).contents[0].text)
    assert [v["relation"] for v in versions["versions"]] == [None, "supersedes"]
    with pytest.raises(MCPError, match="no lineage 'nowhere'"):
        await client.read_resource("vigente://lineages/nowhere")


def test_stdio_server_with_the_sdk_client(tmp_path: Path) -> None:
    db = tmp_path / "limits.db"
    _seed(db)
    params = StdioServerParameters(
        command=_vigente_command()[0], args=[*_vigente_command()[1:], "--db", str(db), "mcp"]
    )
    _run(_exercise_tools, params)
    with Vigente.open(db) as vg:  # what the agent recorded is in the store
        assert [v.value for v in vg.history("svc/upload-limit-mb") if v.known_to is None] == [
            80,
            100,
        ]


def test_streamable_http_endpoint_with_tenant_keys(tmp_path: Path) -> None:
    app = create_app(ServiceConfig(tmp_path / "data", admin_key=ADMIN_KEY, rate=1000, burst=1000))
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with running(app) as url, httpx.Client(base_url=url) as c:
        keys = {}
        for tenant in ("alpha", "beta"):
            c.post("/v1/admin/tenants", json={"name": tenant}, headers=admin).raise_for_status()
            keys[tenant] = c.post(
                f"/v1/admin/tenants/{tenant}/keys", json={}, headers=admin
            ).json()["key"]
        _seed(tmp_path / "data" / "tenants" / "alpha.db")
        _run(_exercise_tools, url, keys["alpha"])

        async def beta_sees_nothing(client: Client) -> None:
            ask = await client.call_tool(
                "ask_evidence", {"lineage": "svc/upload-limit-mb", "valid_at": "2026-10-05"}
            )
            assert ask.structured_content["status"] == "missing"
            cited = await client.call_tool("cite", {"lineage": "cdd", "valid_at": "2025-02-20"})
            assert cited.structured_content["citations"] == []
            found = await client.call_tool(
                "search", {"query": "due diligence uploads", "valid_at": "2024-01-01"}
            )
            assert found.structured_content["hits"] == []
            index = await client.read_resource("vigente://lineages")
            assert json.loads(index.contents[0].text) == {"lineages": []}

        _run(beta_sees_nothing, url, keys["beta"])

        for headers, status in (
            ({}, 401),
            ({"Authorization": "Bearer vgk_nope"}, 401),
            (admin, 403),
        ):
            refused = c.post(
                "/mcp",
                headers={**headers, "Accept": "application/json"},
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )
            assert refused.status_code == status
            assert refused.json()["error"]["status"] == status

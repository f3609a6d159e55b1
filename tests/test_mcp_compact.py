"""What the MCP server shows a model (issue 21, item 10), with the SDK's own client connected
in memory to the real server over a real store: every registered tool is in `vigente mcp
--help`, descriptions carry no docstring indentation, and results are compact JSON."""

from __future__ import annotations

import json
from typing import Any

import anyio
from click.testing import CliRunner
from mcp.client import Client

from tests.conformance.test_runtime import session
from tests.http_server import tool_text
from vigente import Vigente
from vigente.cli import cli
from vigente.mcp_server import build_server


def _with_client(vg: Vigente, body: Any) -> Any:
    async def go() -> Any:
        async with Client(build_server(lambda _: vg)) as client:
            return await body(client)
    return anyio.run(go)


def test_help_lists_every_registered_tool() -> None:
    """It listed five of the eight."""
    with Vigente.open(":memory:") as vg:
        async def names(client: Client) -> list[str]:
            return [t.name for t in (await client.list_tools()).tools]
        registered = _with_client(vg, names)
    helped = CliRunner().invoke(cli, ["mcp", "--help"]).output
    assert len(registered) >= 8 and f"Tools ({len(registered)})" in helped
    assert all(name in helped for name in registered), (registered, helped)


def test_descriptions_and_results_are_compact_for_a_model() -> None:
    with Vigente.open(":memory:") as vg:
        vg.runtime.import_events([json.dumps(e) for e in session()])

        async def body(client: Client) -> tuple[list[str], Any]:
            tools = (await client.list_tools()).tools
            result = await client.call_tool("assemble_context", {
                "conversation": "trip-42", "branch": "main", "participant": "agent"})
            return [t.description or "" for t in tools], result
        descriptions, result = _with_client(vg, body)
    assert all("\n    " not in d and d == d.strip() for d in descriptions)  # no indentation
    text = tool_text(result)
    structured = result.structured_content
    assert json.loads(text) == structured  # the same result, for clients that read text only
    assert text == json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    assert "\n" not in text  # not the SDK's indent-2 copy

"""Every MCP tool fuzzed through the SDK's own client over ``/mcp`` (issue 35, item 10): arguments
drawn from each tool's published input schema, mixed with what a hostile model sends (dates at
the calendar's edges, relative phrases, clocks in the future, huge numbers, NUL, unknown
participants and branches). The bar: every call is a result or a tool error that vigente chose
to give (never an exception the server did not expect), and the server keeps answering. On both
backends."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.conformance.test_runtime import session
from tests.http_server import Tenant, service_root, serving_tenant, tool_text
from vigente import Vigente

ADMIN_KEY = "mcp-fuzz-admin-key-0123456789abcdef"
EXAMPLES = {"sqlite": 30, "postgres": 8}

#: What a hostile model puts in a string: the calendar's edges, relative phrases, future
#: clocks, ids of things that are not there, bytes no store holds.
HOSTILE_TEXT = [
    "9999-12-31", "0001-01-01", "9999-12-31T23:59:59Z", "9999-12-31T23:59:59-14:00",
    "0001-01-01T00:00:00+14:00", "2026-02-30", "2026-13-01", "10000-01-01", "0000-01-01",
    "on 31 December 9999", "in December 9999", "last week", "3 days ago", "the year 10000",
    "next month", "yesterday", "il 31 dicembre 9999", "2027-06-01", "now", "", " ", "\x00",
    "trip-42", "main", "other", "agent", "system", "t1", "a" * 5000, "\u202e\ud7ff", "1e400",
]
HOSTILE_NUMBERS = [0, -1, 2**63, -(2**63), 10**400, 1e308, -0.0]


def _strategy(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    """A hypothesis strategy for a JSON schema as the SDK publishes tools' inputs (a subset:
    types, anyOf, enum, const, $ref), widened with hostile values of the same JSON type."""
    if "$ref" in schema:
        return _strategy(defs[schema["$ref"].rsplit("/", 1)[1]], defs, depth)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema or "oneOf" in schema:
        return st.one_of([_strategy(s, defs, depth) for s in schema.get("anyOf",
                                                                         schema.get("oneOf"))])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([_strategy({**schema, "type": k}, defs, depth) for k in kind])
    if kind == "string":
        hostile = st.sampled_from(HOSTILE_TEXT)
        return st.one_of(hostile, hostile.map(lambda h: f"what happened {h}?"),
                         st.text(max_size=40))
    if kind == "integer":
        return st.one_of(st.integers(-5, 5000), st.sampled_from([n for n in HOSTILE_NUMBERS
                                                                 if isinstance(n, int)]))
    if kind == "number":
        return st.one_of(st.floats(allow_nan=False), st.sampled_from(HOSTILE_NUMBERS))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array" or depth > 2:
        items = schema.get("items", {"type": "string"})
        return st.lists(_strategy(items, defs, depth + 1), max_size=4)
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        fields = {name: _named(name, _strategy(sub, defs, depth + 1))
                  for name, sub in props.items()}
        return st.fixed_dictionaries(
            {k: v for k, v in fields.items() if k in required},
            optional={k: v for k, v in fields.items() if k not in required},
        )
    # any JSON value (a fact's value)
    return st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20),
                     st.sampled_from(HOSTILE_TEXT))


#: Fields a model fills with the ids it has seen: mostly real ones, so the call gets past
#: "no such conversation" to the code that reads its dates and phrases.
REAL = {
    "conversation": ["trip-42"], "branch": ["main", "other"], "participant": ["agent"],
    "lineage": ["svc/limit"], "query": ["trains on 31 December 9999", "last week's trains",
                                        "in December 9999", "Genoa 3 days ago"],
    "known_at": ["0001-01-01", "0001-01-08", "2026-09-10", "9999-12-31"],
    "valid_at": ["0001-01-01", "9999-12-31", "2026-09-10"],
}


def _named(name: str, drawn: Any) -> Any:
    real = REAL.get(name)
    return drawn if real is None else st.one_of(st.sampled_from(real), st.sampled_from(real),
                                                 drawn)


def _seed(store: str) -> None:
    with Vigente.open(store) as vg:
        vg.record("svc/limit", 80, valid_from="2026-09-01", known_at="2026-09-03",
                  source="policy")
        vg.runtime.import_events([json.dumps(e) for e in session()])


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Tenant, str]]:
    with serving_tenant(service_root(request, tmp_path), ADMIN_KEY, _seed) as tenant:
        yield tenant, request.param


def crashed(name: str, text: str) -> bool:
    """The SDK's answer to an exception the tool did not expect: its bare prefix, no reason
    (an anticipated refusal keeps its own text after ``Error executing tool NAME:``)."""
    return text.strip() == f"Error executing tool {name}" or "Traceback" in text


def _fuzz_tool(client: Client, tool: Any, examples: int,
               calls: list[tuple[str, bool]]) -> None:
    """Call ``tool`` with ``examples`` drawn arguments (in a worker thread: hypothesis drives
    the client's event loop through anyio)."""
    schema = tool.input_schema

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(args=_strategy(schema, schema.get("$defs", {})))
    def one(args: dict[str, Any]) -> None:
        try:
            result = anyio.from_thread.run(client.call_tool, tool.name, args)
        except MCPError:  # refused before the tool ran: the HTTP status says how (below)
            calls.append((tool.name, True))
            return
        text = tool_text(result)
        assert not crashed(tool.name, text), (tool.name, args, text[:500])
        calls.append((tool.name, bool(result.is_error)))

    one()


def test_every_tool_takes_any_arguments_without_failing(served: tuple[Tenant, str]) -> None:
    tenant, backend = served
    calls: list[tuple[str, bool]] = []

    async def fuzz(client: Client) -> None:
        tools = (await client.list_tools()).tools
        assert len(tools) >= 9
        for tool in tools:
            await anyio.to_thread.run_sync(_fuzz_tool, client, tool, EXAMPLES[backend], calls)
        alive = await client.call_tool("ask_evidence", {"lineage": "svc/limit",
                                                        "valid_at": "2026-09-10"})
        assert not alive.is_error, tool_text(alive)

    statuses: list[int] = []

    async def status(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    async def main() -> None:
        headers = {"Authorization": f"Bearer {tenant.token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60,
                                      event_hooks={"response": [status]}) as http:
            transport = streamable_http_client(f"{tenant.url}/mcp", http_client=http)
            async with Client(transport, read_timeout_seconds=60) as client:
                await fuzz(client)

    anyio.run(main)
    assert statuses and not [s for s in statuses if s >= 500], statuses  # refusals are 4xx
    tried = {name for name, _ in calls}
    assert len(tried) >= 9 and any(not error for _, error in calls), calls

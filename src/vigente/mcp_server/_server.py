"""The MCP server: vigente's evidence and its agent runtime as tools, its lineages as resources.

Built with the official SDK's :class:`MCPServer` (``mcp`` 2). Every tool calls the public
:class:`~vigente.Vigente` API of one store, found per request by ``resolve(ctx)``: the store
given to ``vigente mcp`` (stdio), or over HTTP the store of the tenant whose API key the request
carries. A vigente error reaches the agent as a tool error whose text says what to change.

The tools live by family: :mod:`._evidence_tools` (ask, search, cite, record, verify) and
:mod:`._runtime_tools` (the agent runtime); the resources in :mod:`._resources`; what they all
share (finding the store, compact results, errors) in :mod:`._calls`.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from vigente import telemetry
from vigente.errors import unknown_fields_message
from vigente.mcp_server._calls import STDIO, PrincipalOf, Resolver, StoreServer, Tool
from vigente.mcp_server._evidence_tools import EVIDENCE_TOOLS
from vigente.mcp_server._resources import register_resources
from vigente.mcp_server._runtime_tools import RUNTIME_TOOLS

__all__ = ["INSTRUCTIONS", "Resolver", "build_server"]

INSTRUCTIONS = (
    "vigente decides what may be treated as true on a date, as known at a knowledge date. "
    "Before stating a fact, a rule in force, a limit or a version of a document, call "
    "ask_evidence (or search when you do not know the lineage name) and answer from its "
    "`statement`, keeping its qualifiers (dates, 'announced', 'superseded', 'no record'). "
    "Quote sources with cite. Before sending an answer that states values or versions, call "
    "verify_answer and fix every finding. Record what you learned with record_fact. Dates are "
    "YYYY-MM-DD or RFC 3339 timestamps with an offset. "
    "As an agent runtime: log what happens in a conversation (messages, runs, tool calls and "
    "their results) with record_event, build the context of the next model call with "
    "assemble_context and send its `messages` as they are, ask explain_assembly why a "
    "record did not reach the model, and recall_memory what was said or found earlier."
)

#: Every tool, in the order a client lists them.
TOOLS: tuple[Tool, ...] = (*EVIDENCE_TOOLS, *RUNTIME_TOOLS)


class _ToolTiming:
    """MCP middleware: each tool call's duration as ``vigente.operation.duration`` (surface
    ``mcp``, the tool's name when it is one of the server's, status ``ok`` or ``error``). The
    call's span is the SDK's own (``tools/call NAME``)."""

    def __init__(self) -> None:
        self.tools: set[str] = set()

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        name = (ctx.params or {}).get("name")
        started, status = time.perf_counter(), "error"
        try:
            result = await call_next(ctx)
            status = "error" if getattr(result, "is_error", False) else "ok"
            return result
        finally:
            telemetry.record_operation("mcp", name if name in self.tools else "(unknown)",
                                       status, time.perf_counter() - started)


class _KnownArguments:
    """MCP middleware: a tool call with an argument the tool does not take is refused as a
    tool error naming it, the closest argument the tool takes and all of them (the SDK drops
    such an argument without a word: a misspelt ``known_att`` answered as known now)."""

    def __init__(self) -> None:
        self.arguments: dict[str, tuple[str, ...]] = {}

    def add(self, name: str, fn: Callable[..., Any]) -> None:
        self.arguments[name] = tuple(
            p.name for p in inspect.signature(fn).parameters.values() if p.name != "ctx")

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method == "tools/call":
            params = ctx.params or {}
            known = self.arguments.get(str(params.get("name")))
            given = params.get("arguments") or {}
            if known is not None and isinstance(given, dict):
                unknown = [str(key) for key in given if key not in known]
                if unknown:
                    message = unknown_fields_message(
                        unknown, list(known), f"the arguments of {params['name']}")
                    return CallToolResult(content=[TextContent(type="text", text=message)],
                                          is_error=True)
        return await call_next(ctx)


def build_server(resolve: Resolver, principal_of: PrincipalOf | None = None) -> MCPServer:
    """An MCP server whose tools and resources read and write the store ``resolve`` gives,
    acting as ``principal_of`` says (default: an unscoped agent, ``vigente mcp``: an MCP
    client is model-facing)."""
    from vigente import __version__

    timing = _ToolTiming()
    known = _KnownArguments()
    server = StoreServer(
        resolve,
        principal_of or (lambda _ctx: STDIO),
        name="vigente",
        title="vigente evidence store",
        description="What an agent may treat as true, for which date, as known when.",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",  # the SDK configures the root logger; INFO would log every call
        middleware=[timing, known],
    )
    for tool in TOOLS:
        _register(server, tool)
        timing.tools.add(tool.name or tool.fn.__name__)
        known.add(tool.name or tool.fn.__name__, tool.fn)
    register_resources(server)
    return server


def _register(server: MCPServer, tool: Tool) -> None:
    """Add ``tool`` to ``server``, its docstring dedented into the description a model reads."""
    described = server.tool(
        name=tool.name,
        description=inspect.cleandoc(tool.fn.__doc__ or ""),
        annotations=tool.annotations,
    )
    described(tool.fn)

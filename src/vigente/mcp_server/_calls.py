"""What every tool of the MCP server shares: how it finds the store of the request it serves,
how its result reaches the client, how vigente's errors become tool errors, and its hints."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, NamedTuple, TypeVar, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from vigente import telemetry
from vigente.api import Vigente
from vigente.application.errors import ApiError
from vigente.application.roles import Principal
from vigente.errors import VigenteError

__all__ = [
    "STDIO",
    "PrincipalOf",
    "READ",
    "WRITE",
    "Resolver",
    "StoreServer",
    "Tool",
    "ToolResult",
    "resource_of",
    "principal",
    "result_of",
    "store",
]

Resolver = Callable[[Context], Vigente]
#: Who a request's tools act as: the key's principal over HTTP, ``vigente mcp``'s over stdio.
PrincipalOf = Callable[[Context], Principal]

#: ``vigente mcp`` unscoped: a model-facing client of a local store.
STDIO = Principal("agent", "vigente mcp")
T = TypeVar("T")

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

#: What a tool returns: its result as structured content (the output schema is the JSON
#: object), and the same as one compact JSON text for clients that read only text; never the
#: SDK's default, an indented copy that doubled what a model reads.
ToolResult = Annotated[CallToolResult, dict[str, Any]]


class Tool(NamedTuple):
    """A tool as the server registers it: the function (its signature is the input schema,
    its docstring the description), its hints, and its name when not the function's."""

    fn: Callable[..., ToolResult]
    annotations: ToolAnnotations
    name: str | None = None


class StoreServer(MCPServer[Any]):
    """The SDK's server, holding ``resolve``: how a request's tools find their store (the
    store given to ``vigente mcp``, or over HTTP the store of the caller's tenant), and
    ``principal_of``: who they act as (application/roles.py)."""

    def __init__(self, resolve: Resolver, principal_of: PrincipalOf, **options: Any) -> None:
        super().__init__(**options)
        self.resolve = resolve
        self.principal_of = principal_of

    async def run_stdio_async(self) -> None:
        """Serve over stdio with every line bounded as an HTTP body is (:mod:`._stdio`)."""
        from vigente.mcp_server._stdio import serve_bounded_stdio

        await serve_bounded_stdio(self._lowlevel_server)


def store(ctx: Context) -> Vigente:
    """The store the request ``ctx`` serves reads and writes."""
    return cast(StoreServer, ctx.mcp_server).resolve(ctx)


def principal(ctx: Context) -> Principal:
    """Who the request ``ctx`` acts as: its role decides what it may write and read."""
    return cast(StoreServer, ctx.mcp_server).principal_of(ctx)


def _compact(data: dict[str, Any]) -> CallToolResult:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=data)


def result_of(action: Callable[[], dict[str, Any]]) -> CallToolResult:
    """Run a tool body; vigente's own errors become tool errors the agent can act on."""
    try:
        return _compact(action())
    except VigenteError as exc:
        telemetry.refused(exc, "mcp")
        raise ToolError(str(exc)) from None
    except ApiError as exc:
        telemetry.refused(exc, "mcp")
        raise ToolError(exc.message) from None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors()[:10]
        )
        raise ToolError(f"invalid arguments: {problems}") from None
    except UnicodeError:
        raise ToolError("a string is not valid Unicode text: send UTF-8 text") from None


def resource_of(action: Callable[[], T]) -> T:
    """Read a resource; vigente's own errors become resource errors."""
    try:
        return action()
    except VigenteError as exc:
        raise ResourceError(str(exc)) from None

"""The MCP server's resources: the store's lineages (``vigente://lineages``) and each one's
versions (``vigente://lineages/{lineage}``), read from the request's store."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer, ResourceSecurity

from vigente.errors import InvalidInput
from vigente.mcp_server._calls import resource_of, store

__all__ = ["register_resources"]


def lineages(ctx: Context, kind: str | None = None) -> dict[str, Any]:
    """Every lineage of the store (or of one ``kind``), each with its resource URI."""

    def run() -> dict[str, Any]:
        vg = store(ctx)
        items = []
        for name, scope in vg.lineages():
            this = "document" if vg.documents.is_document_lineage(name) else "fact"
            if kind in (None, this):
                items.append(
                    {
                        "lineage": name,
                        "scope": scope.as_dict(),
                        "kind": this,
                        "uri": f"vigente://lineages/{name}",
                    }
                )
        return {"lineages": items}

    return resource_of(run)


def lineage_resource(ctx: Context, lineage: str) -> dict[str, Any]:
    """A document lineage's versions, or a fact lineage's snapshots."""

    def run() -> dict[str, Any]:
        vg = store(ctx)
        versions = vg.documents.versions(lineage)
        if versions:
            return {
                "lineage": lineage,
                "kind": "document",
                "versions": [v.as_dict() for v in versions],
            }
        history = vg.history(lineage)
        if not history:
            raise InvalidInput(f"no lineage {lineage!r}: read vigente://lineages for the names")
        return {
            "lineage": lineage,
            "kind": "fact",
            "versions": [dict(v.as_row(), scope=v.scope.as_dict()) for v in history],
        }

    return resource_of(run)


def register_resources(server: MCPServer[Any]) -> None:
    """Add the lineage resources to ``server``. A lineage is a name that may hold slashes
    (``{+lineage}``), not a file path: the SDK's path checks are waived for it."""
    server.resource(
        "vigente://lineages{?kind}",
        name="lineages",
        mime_type="application/json",
        description="Every lineage in the store with its resource URI; kind=fact "
        "or kind=document keeps one kind.",
    )(lineages)
    server.resource(
        "vigente://lineages/{+lineage}",
        name="lineage",
        mime_type="application/json",
        security=ResourceSecurity(exempt_params={"lineage"}),
        description="One lineage: its document versions (with relations) or its "
        "snapshots on both time axes.",
    )(lineage_resource)

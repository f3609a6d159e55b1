"""Runtime ids in URL paths may hold ``/`` (a LangGraph thread ``team/alpha``, ``tau/airline/17``).

Starlette routes on the *decoded* path, so ``/v1/conversations/team%2Falpha`` and
``/v1/conversations/team/alpha`` are the same path to it, and a ``{name}`` parameter stops at
the first ``/``. Routes of :class:`IdRoute` take such ids both ways:

- sent raw, an id parameter declared ``{name:path}`` takes every segment up to the route's
  literal suffix; a route with a suffix (``/conversations/{c:path}/branches``) is declared
  before the bare one (``/conversations/{c:path}``), since the first route that matches wins;
- percent-encoded, the route matches the path as sent, where ``%2F`` is not a separator: an
  encoded slash stays inside the parameter it was sent in.

So an id that itself ends in a suffix's name (``x/branches``) is read raw as the suffix route of
``x``; sent encoded (``x%2Fbranches``) it is the id ``x/branches``. A client that
percent-encodes every id it puts in a path (``quote(id, safe="")``, ``encodeURIComponent``)
always addresses the id it means.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from fastapi.routing import APIRoute
from starlette.routing import Match
from starlette.types import Scope

__all__ = ["IdRoute", "segment_path"]


def _escaped(segment: str) -> str:
    """A decoded segment in which ``%`` and ``/`` are escaped again (and nothing else)."""
    return segment.replace("%", "%25").replace("/", "%2F")


def segment_path(scope: Scope) -> str | None:
    """The request's path with each segment decoded but an encoded ``/`` (and ``%``) kept
    escaped, from the ASGI ``raw_path``; ``None`` when the path holds no encoded slash or the
    server's ``raw_path`` does not decode to its ``path`` (then the decoded path is routed)."""
    raw = scope.get("raw_path")
    if not isinstance(raw, bytes) or b"%2f" not in raw.lower():
        return None
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return None
    segments = [unquote(s) for s in text.split("/")]
    if "/".join(segments) != scope.get("path"):
        return None
    return "/".join(_escaped(s) for s in segments)


class IdRoute(APIRoute):
    """An API route whose path parameters may hold ``/``, sent raw or as ``%2F`` (see the
    module's docstring for the rule)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        path = segment_path(scope)
        if path is None:
            return super().matches(scope)
        match, child = super().matches({**scope, "path": path})
        if match is not Match.NONE and "path_params" in child:
            params: dict[str, Any] = dict(child["path_params"])
            for name in self.param_convertors:
                if isinstance(params.get(name), str):
                    params[name] = unquote(params[name])
            child["path_params"] = params
        return match, child

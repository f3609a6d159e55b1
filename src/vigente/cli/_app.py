"""The ``vigente`` command group, its shared options and error mapping.

Errors print ``Error: <what went wrong and how to fix it>`` and exit 1; usage errors exit 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click
from rich.console import Console

from vigente.api import Vigente
from vigente.errors import VigenteError

__all__ = ["cli", "console", "main", "open_store", "parse_scope", "scope_option"]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_DB = "vigente.db"


class _Group(click.Group):
    """Maps vigente's own errors to ``Error: …`` with exit status 1, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VigenteError as exc:
            raise click.ClickException(str(exc)) from None
        except UnicodeEncodeError:
            raise click.ClickException(
                "an argument is not valid UTF-8: re-encode it as UTF-8"
            ) from None


def console() -> Console:
    # Piped output keeps whole rows (dates never wrap); a terminal gets its own width.
    return Console(highlight=False, width=None if sys.stdout.isatty() else 160)


def parse_scope(values: Sequence[str]) -> dict[str, str]:
    scope: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not key=value", param_hint="--scope")
        scope[key] = value
    return scope


def scope_option(func: F) -> F:
    return click.option(
        "--scope",
        "scope",
        multiple=True,
        metavar="KEY=VALUE",
        help="Scope entry (repeatable), e.g. --scope product=mail --scope env=prod.",
    )(func)


def open_store(ctx: click.Context) -> Vigente:
    obj = ctx.ensure_object(dict)
    store: Vigente | None = obj.get("store")
    if store is None:
        db = obj.get("db") or os.environ.get("VIGENTE_DB") or DEFAULT_DB
        store = Vigente.open(db, default_zone=obj.get("default_zone"))
        obj["store"] = store
        ctx.call_on_close(store.close)
    return store


@click.group(cls=_Group)
@click.option(
    "--db",
    metavar="PATH|URL",
    help=f"SQLite file or postgresql:// URL (default: $VIGENTE_DB or {DEFAULT_DB}).",
)
@click.option(
    "--default-zone",
    metavar="ZONE",
    help="IANA zone for timestamps given without an offset (otherwise they are refused).",
)
@click.version_option(package_name="vigente")
@click.pass_context
def cli(ctx: click.Context, db: str | None, default_zone: str | None) -> None:
    """vigente: what an agent may treat as true, for which date, as known when."""
    ctx.ensure_object(dict).update(db=db, default_zone=default_zone)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``vigente`` script."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="vigente")



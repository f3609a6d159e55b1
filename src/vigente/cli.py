"""The ``vigente`` command line: a thin surface over :class:`vigente.Vigente`.

Errors print ``Error: <what went wrong and how to fix it>`` and exit 1; usage errors exit 2.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.errors import VigenteError
from vigente.kernel.evidence import Evidence
from vigente.kernel.statement import format_value
from vigente.kernel.values import parse_cli_value
from vigente.kernel.versions import Version

__all__ = ["cli", "main"]

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


def _console() -> Console:
    # Piped output keeps whole rows (dates never wrap); a terminal gets its own width.
    return Console(highlight=False, width=None if sys.stdout.isatty() else 160)


def _parse_scope(values: Sequence[str]) -> dict[str, str]:
    scope: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not key=value", param_hint="--scope")
        scope[key] = value
    return scope


def _scope_option(func: F) -> F:
    return click.option(
        "--scope",
        "scope",
        multiple=True,
        metavar="KEY=VALUE",
        help="Scope entry (repeatable), e.g. --scope product=mail --scope env=prod.",
    )(func)


def _open(ctx: click.Context) -> Vigente:
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


@cli.command()
@click.argument("lineage")
@click.argument("value")
@click.option("--valid-from", required=True, metavar="DATE", help="Start of validity (included).")
@click.option("--valid-to", metavar="DATE", help="End of validity (excluded); omit if open.")
@click.option("--known-at", required=True, metavar="DATE", help="When this was learned.")
@click.option("--source", required=True, help="Who states it (a document, a connector …).")
@click.option("--now", metavar="DATE", help="Treat this date as today (for replays).")
@_scope_option
@click.pass_context
def record(
    ctx: click.Context,
    lineage: str,
    value: str,
    valid_from: str,
    valid_to: str | None,
    known_at: str,
    source: str,
    now: str | None,
    scope: tuple[str, ...],
) -> None:
    """Record that LINEAGE is VALUE (JSON if valid JSON, else a string) over a period."""
    result = _open(ctx).record(
        lineage,
        parse_cli_value(value),
        valid_from=valid_from,
        valid_to=valid_to,
        known_at=known_at,
        source=source,
        scope=_parse_scope(scope),
        now=now,
    )
    if not result.changed:
        click.echo("unchanged: the store already states exactly this")
        return
    click.echo(
        f"recorded write {result.write_id}: {len(result.appended)} snapshot(s) appended, "
        f"{len(result.closed)} closed"
    )


@cli.command()
@click.argument("lineage")
@click.option("--valid-from", required=True, metavar="DATE")
@click.option("--valid-to", metavar="DATE")
@click.option("--known-at", required=True, metavar="DATE")
@click.option("--source", required=True)
@click.option("--now", metavar="DATE", help="Treat this date as today (for replays).")
@_scope_option
@click.pass_context
def retract(
    ctx: click.Context,
    lineage: str,
    valid_from: str,
    valid_to: str | None,
    known_at: str,
    source: str,
    now: str | None,
    scope: tuple[str, ...],
) -> None:
    """Withdraw what SOURCE stated about LINEAGE over a period (history is kept)."""
    result = _open(ctx).retract(
        lineage,
        valid_from=valid_from,
        valid_to=valid_to,
        known_at=known_at,
        source=source,
        scope=_parse_scope(scope),
        now=now,
    )
    if not result.changed:
        click.echo("unchanged: nothing to retract in that period")
        return
    click.echo(
        f"retracted with write {result.write_id}: {len(result.closed)} snapshot(s) closed, "
        f"{len(result.appended)} corrected snapshot(s) appended"
    )


@cli.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--now", metavar="DATE", help="Treat this date as today (for replays).")
@click.pass_context
def import_(ctx: click.Context, file: Path, now: str | None) -> None:
    """Import a JSON Lines FILE of record/retract statements, all or nothing."""
    report = _open(ctx).import_jsonl(file, now=now)
    click.echo(
        f"imported {report.statements} statement(s): {report.applied} changed the store, "
        f"{report.versions_appended} snapshot(s) appended, {report.versions_closed} closed"
    )


@cli.command()
@click.argument("lineage")
@click.option("--at", "valid_at", required=True, metavar="DATE", help="The date asked about (t).")
@click.option("--known-at", metavar="DATE", help="Knowledge snapshot (k); default: now.")
@click.option("--now", metavar="DATE", help="Treat this date as today.")
@_scope_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def ask(
    ctx: click.Context,
    lineage: str,
    valid_at: str,
    known_at: str | None,
    now: str | None,
    scope: tuple[str, ...],
    as_json: bool,
) -> None:
    """What was LINEAGE on --at, as known on --known-at?"""
    evidence = _open(ctx).evidence(
        lineage, valid_at=valid_at, known_at=known_at, scope=_parse_scope(scope), now=now
    )
    if as_json:
        click.echo(json.dumps(evidence.as_dict(), ensure_ascii=False))
        return
    _print_evidence(_console(), evidence)


def _fmt_end(value: object) -> str:
    return "—" if value is None else str(value)


def _print_evidence(console: Console, evidence: Evidence) -> None:
    colour = {"supported": "green", "missing": "yellow", "conflict": "red"}[evidence.status.value]
    console.print(
        f"[bold {colour}]{evidence.status.value}[/] · {evidence.interpretation.value} · "
        f"t={evidence.valid_at} k={evidence.known_at} now={evidence.now}"
    )
    values = ", ".join(format_value(v) for v in evidence.values) or "—"
    console.print(f"values: [bold]{values}[/]")
    console.print(evidence.statement, markup=False)
    if evidence.admitted:
        console.print(_versions_table("admitted", evidence.admitted))
    if evidence.excluded:
        table = Table(title="excluded", title_justify="left")
        for name in ("version", "value", "source", "reason", "successor"):
            table.add_column(name)
        for item in evidence.excluded:
            table.add_row(
                item.version.version_id,
                format_value(item.version.value),
                item.version.source,
                item.reason.value,
                item.successor_id or "—",
            )
        console.print(table)


def _versions_table(title: str, versions: Sequence[Version]) -> Table:
    table = Table(title=title, title_justify="left")
    for name in (
        "version",
        "value",
        "source",
        "scope",
        "valid_from",
        "valid_to",
        "known_from",
        "known_to",
    ):
        table.add_column(name)
    for v in versions:
        table.add_row(
            v.version_id,
            format_value(v.value),
            v.source,
            str(v.scope),
            str(v.valid_from),
            _fmt_end(v.valid_to),
            str(v.known_from),
            _fmt_end(v.known_to),
        )
    return table


@cli.command()
@click.argument("lineage")
@_scope_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def history(ctx: click.Context, lineage: str, scope: tuple[str, ...], as_json: bool) -> None:
    """Every snapshot of LINEAGE on both time axes."""
    versions = _open(ctx).history(lineage, scope=_parse_scope(scope) if scope else None)
    if as_json:
        rows = [dict(v.as_row(), scope=v.scope.as_dict()) for v in versions]
        click.echo(json.dumps({"lineage": lineage, "versions": rows}, ensure_ascii=False))
        return
    if not versions:
        raise click.ClickException(
            f"no lineage {lineage!r} in this database: check the name with `vigente lineages`"
        )
    _console().print(_versions_table(f"history of {lineage}", versions))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def lineages(ctx: click.Context, as_json: bool) -> None:
    """List every lineage (and scope) in the database."""
    items = _open(ctx).lineages()
    if as_json:
        payload = [{"lineage": name, "scope": scope.as_dict()} for name, scope in items]
        click.echo(json.dumps({"lineages": payload}, ensure_ascii=False))
        return
    table = Table("lineage", "scope")
    for name, scope in items:
        table.add_row(name, str(scope))
    _console().print(table)


@cli.command()
@click.argument("sources", nargs=-1, required=True)
@click.option("--known-at", required=True, metavar="DATE", help="When the rule was adopted.")
@click.option("--lineage", help="Limit the rule to one lineage (default: the whole scope).")
@click.option("--now", metavar="DATE", help="Treat this date as today.")
@_scope_option
@click.pass_context
def precedence(
    ctx: click.Context,
    sources: tuple[str, ...],
    known_at: str,
    lineage: str | None,
    now: str | None,
    scope: tuple[str, ...],
) -> None:
    """Set an explicit precedence of SOURCES (highest first) to resolve conflicts."""
    rule = _open(ctx).set_precedence(
        sources, known_at=known_at, scope=_parse_scope(scope), lineage=lineage, now=now
    )
    click.echo(f"precedence rule {rule.rule_id}: {' > '.join(rule.sources)} from {rule.known_from}")


@cli.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Run the seed article's example from its three ingest events."""
    from vigente.demo import run_demo

    obj = ctx.ensure_object(dict)
    if obj.get("db") is None:
        obj["db"] = str(Path(tempfile.mkdtemp(prefix="vigente-demo-")) / "demo.db")
    if not run_demo(_open(ctx), _console()):
        raise click.ClickException("the computed table does not match the seed article's")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``vigente`` script."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="vigente")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])

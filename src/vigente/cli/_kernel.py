"""Kernel commands: record, retract, import, ask, history, lineages, precedence, backfills,
demo."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from vigente.application.evidence import ValidDateRequired, evidence_for
from vigente.cli._app import (
    Counted,
    cli,
    console,
    emit_json,
    json_option,
    knowledge,
    open_store,
    parse_scope,
    progress,
    scope_option,
)
from vigente.evidence.in_force import DocumentEvidence
from vigente.jsonl import read_lines
from vigente.kernel.answer import Evidence
from vigente.kernel.ledger import WriteResult
from vigente.kernel.statement import format_value, moment
from vigente.records.values import parse_cli_value
from vigente.records.versions import Version

F = TypeVar("F", bound=Callable[..., Any])


def statement_options(func: F) -> F:
    """The options of a record or retract statement: period, knowledge date, source, scope."""
    for option in reversed((
        click.option("--valid-from", required=True, metavar="DATE",
                     help="Start of validity (included)."),
        click.option("--valid-to", metavar="DATE",
                     help="End of validity (excluded); omit if open."),
        click.option("--known-at", metavar="DATE",
                     help="When this was learned (default: now, dated by the store as it "
                          "writes, after every answer already given)."),
        click.option("--source", required=True, help="Who states it (a document, a connector …)."),
        click.option("--now", metavar="DATE", help="Treat this date as today (for replays)."),
        scope_option,
    )):
        func = option(func)
    return func


def _statement(scope: tuple[str, ...], **fields: str | None) -> dict[str, Any]:
    return {**fields, "scope": parse_scope(scope)}


def _row(v: Version) -> dict[str, Any]:
    return dict(v.as_row(), scope=v.scope.as_dict())


def _write_json(lineage: str, result: WriteResult) -> dict[str, Any]:
    """The ``--json`` shape of record and retract."""
    return {"lineage": lineage, "changed": result.changed, "write_id": result.write_id,
            "appended": [_row(v) for v in result.appended],
            "closed": [_row(v) for v in result.closed]}


@cli.command(epilog="""\b
Example:
  vigente record svc/upload-limit-mb 80 --valid-from 2026-09-01 \\
      --known-at 2026-09-03 --source policy""")
@click.argument("lineage")
@click.argument("value")
@statement_options
@json_option
@click.pass_context
def record(ctx: click.Context, /, lineage: str, value: str, scope: tuple[str, ...],
           as_json: bool, **fields: str | None) -> None:
    """Record that LINEAGE is VALUE (JSON if valid JSON, else a string) over a period."""
    result = open_store(ctx).record(lineage, parse_cli_value(value), **_statement(scope, **fields))
    if as_json:
        emit_json(_write_json(lineage, result))
        return
    if not result.changed:
        click.echo("unchanged: the store already states exactly this")
        return
    click.echo(
        f"recorded write {result.write_id}: {len(result.appended)} snapshot(s) appended, "
        f"{len(result.closed)} closed"
    )


@cli.command()
@click.argument("lineage")
@statement_options
@json_option
@click.pass_context
def retract(ctx: click.Context, /, lineage: str, scope: tuple[str, ...], as_json: bool,
            **fields: str | None) -> None:
    """Withdraw what SOURCE stated about LINEAGE over a period (history is kept)."""
    result = open_store(ctx).retract(lineage, **_statement(scope, **fields))
    if as_json:
        emit_json(_write_json(lineage, result))
        return
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
@click.option("--backfill", metavar="REASON",
              help="Fill in history behind the answered horizon, recorded with REASON "
                   "(see `vigente backfills`).")
@json_option
@click.pass_context
def import_(ctx: click.Context, file: Path, now: str | None, backfill: str | None,
            as_json: bool) -> None:
    """Import a JSON Lines FILE of record/retract statements, all or nothing (a progress
    bar on a terminal)."""
    lines = read_lines(file)
    vg = open_store(ctx)
    with progress("checking statements", len(lines)) as step:
        report = vg.import_lines(Counted(lines, step, "writing statements"), now=now,
                                 backfill=backfill)
    if as_json:
        emit_json({"statements": report.statements, "applied": report.applied,
                   "versions_appended": report.versions_appended,
                   "versions_closed": report.versions_closed})
        return
    click.echo(
        f"imported {report.statements} statement(s): {report.applied} changed the store, "
        f"{report.versions_appended} snapshot(s) appended, {report.versions_closed} closed"
    )


@cli.command(epilog="""\b
Examples:
  vigente ask svc/upload-limit-mb --at 2026-09-02                # as known now
  vigente ask svc/upload-limit-mb --at 2026-09-02 --known-at 2026-09-02 --json
  vigente ask cdd --at 2025-02-20 --lang it        # which circular was in force""")
@click.argument("lineage")
@click.option("--at", "valid_at", metavar="DATE",
              help="The date asked about (t); required for facts, default today for documents.")
@click.option("--known-at", metavar="DATE", help="Knowledge snapshot (k); default: now.")
@click.option("--now", metavar="DATE", help="Treat this date as today.")
@scope_option
@click.option("--lang", default="en", show_default=True, type=click.Choice(["en", "it"]),
              help="Language of the statement and its citations.")
@click.option("--record", is_flag=True, help="Record the admissibility decision.")
@json_option
@click.pass_context
def ask(
    ctx: click.Context,
    lineage: str,
    valid_at: str | None,
    known_at: str | None,
    now: str | None,
    scope: tuple[str, ...],
    lang: str,
    record: bool,
    as_json: bool,
) -> None:
    """What was LINEAGE on --at, as known on --known-at? (For a document lineage: which
    version was in force.)"""
    try:
        evidence = evidence_for(open_store(ctx), lineage, valid_at=valid_at, known_at=known_at,
                                scope=parse_scope(scope), now=now, language=lang, record=record)
    except ValidDateRequired:
        raise click.UsageError("--at is required: give the date the question is about") from None
    if as_json:
        emit_json(evidence.as_dict())
        return
    if isinstance(evidence, DocumentEvidence):
        from vigente.cli._documents import print_document_evidence

        print_document_evidence(evidence)
        return
    _print_evidence(console(), evidence)
    if evidence.decision_id:
        console().print(f"decision recorded: {evidence.decision_id}")


def _fmt_end(value: object) -> str:
    return "—" if value is None else str(value)


def _print_evidence(console: Console, evidence: Evidence) -> None:
    colour = {"supported": "green", "missing": "yellow", "conflict": "red"}[evidence.status.value]
    console.print(
        f"[bold {colour}]{evidence.status.value}[/] · {evidence.interpretation.value} · "
        f"t={moment(evidence.valid_at)} · k={knowledge(evidence.known_at, evidence.now)}"
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
@scope_option
@json_option
@click.pass_context
def history(ctx: click.Context, lineage: str, scope: tuple[str, ...], as_json: bool) -> None:
    """Every snapshot of LINEAGE on both time axes."""
    versions = open_store(ctx).history(lineage, scope=parse_scope(scope) if scope else None)
    if not versions:  # the same error with --json: an empty list would read as "no versions yet"
        where = f" in scope {', '.join(scope)}" if scope else ""
        raise click.ClickException(
            f"no lineage {lineage!r}{where} in this database: check the name with "
            "`vigente lineages`"
        )
    if as_json:
        emit_json({"lineage": lineage, "versions": [_row(v) for v in versions]})
        return
    console().print(_versions_table(f"history of {lineage}", versions))


@cli.command()
@json_option
@click.pass_context
def lineages(ctx: click.Context, as_json: bool) -> None:
    """List every lineage (and scope) in the database."""
    items = open_store(ctx).lineages()
    if as_json:
        payload = [{"lineage": name, "scope": scope.as_dict()} for name, scope in items]
        emit_json({"lineages": payload})
        return
    table = Table("lineage", "scope")
    for name, scope in items:
        table.add_row(name, str(scope))
    console().print(table)


@cli.command()
@click.argument("sources", nargs=-1, required=True)
@click.option("--known-at", metavar="DATE",
              help="When the rule was adopted (default: learned now).")
@click.option("--lineage", help="Limit the rule to one lineage (default: the whole scope).")
@click.option("--now", metavar="DATE", help="Treat this date as today.")
@click.option("--backfill", metavar="REASON",
              help="Date the rule behind answers already given, saying why (recorded).")
@scope_option
@json_option
@click.pass_context
def precedence(
    ctx: click.Context,
    sources: tuple[str, ...],
    known_at: str | None,
    lineage: str | None,
    now: str | None,
    backfill: str | None,
    scope: tuple[str, ...],
    as_json: bool,
) -> None:
    """Set an explicit precedence of SOURCES (highest first) to resolve conflicts."""
    rule = open_store(ctx).set_precedence(
        sources, known_at=known_at, scope=parse_scope(scope), lineage=lineage, now=now,
        backfill=backfill,
    )
    if as_json:
        emit_json({"rule_id": rule.rule_id, "sources": list(rule.sources),
                   "known_from": rule.known_from.isoformat(), "lineage": rule.lineage,
                   "scope": rule.scope.as_dict()})
        return
    click.echo(f"precedence rule {rule.rule_id}: {' > '.join(rule.sources)} from {rule.known_from}")


@cli.command()
@json_option
@click.pass_context
def backfills(ctx: click.Context, as_json: bool) -> None:
    """The answered horizon (writes must be dated after it) and every recorded backfill."""
    vg = open_store(ctx)
    horizon = vg.answered_horizon()
    items = vg.backfills()
    if as_json:
        emit_json({"answered_horizon": None if horizon is None else horizon.isoformat(),
                   "backfills": [b.as_dict() for b in items]})
        return
    click.echo("answered horizon: " + ("none yet" if horizon is None else str(horizon)))
    table = Table("backfill", "recorded", "kind", "statements", "knowledge times", "reason")
    for b in items:
        table.add_row(b.backfill_id, str(b.recorded_at), b.kind, str(b.statements),
                      f"{b.earliest} – {b.latest}", b.reason)
    console().print(table)


@cli.command()
@click.option("--repair", is_flag=True,
              help="Move each unreadable instant inside the years 1-9999, and each knowledge "
                   "time after the store's clock to now, and record the repair.")
@json_option
@click.pass_context
def check(ctx: click.Context, repair: bool, as_json: bool) -> None:
    """Find stored instants no question can read back (outside the years 1-9999 in UTC) and
    knowledge the store cannot have held yet (knowledge times after its clock).

    \b
    Exit 0: none (or all repaired with --repair); exit 1: some found, listed one per line."""
    found = open_store(ctx).check(repair=repair)
    if as_json:
        emit_json({"repaired" if repair else "unreadable": [f.as_dict() for f in found]})
    elif not found:
        click.echo("no unreadable instants: every stored instant is inside the years 1-9999, "
                   "and no knowledge time is after the store's clock")
    else:
        for item in found:
            click.echo(("future knowledge: " if item.problem == "future" else "") + str(item))
    if repair and found:
        click.echo(f"repaired {len(found)} value(s); the repair is recorded as a store_repair "
                   "decision (vigente decisions list)", err=True)
    elif found:
        future = sum(f.problem == "future" for f in found)
        raise click.ClickException(
            f"{len(found) - future} stored instant(s) outside the years 1-9999 in UTC, which "
            f"break every question that reads them, and {future} knowledge time(s) after the "
            "store's clock, which freeze their lineages: run `vigente check --repair` to move "
            "them (recorded)")


@cli.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Run the seed article's example from its three ingest events."""
    from vigente.demo import run_demo

    obj = ctx.ensure_object(dict)
    if obj.get("db") is None:
        obj["db"] = str(Path(tempfile.mkdtemp(prefix="vigente-demo-")) / "demo.db")
    if not run_demo(open_store(ctx), console()):
        raise click.ClickException("the computed table does not match the seed article's")



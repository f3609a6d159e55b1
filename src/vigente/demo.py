"""The seed article's example, computed from its three ingest events (``vigente demo``).

An upload limit goes from 50 to 80 MB on 1 September, but the connector learns it on
3 September; on 20 September an announcement of 100 MB from 1 October arrives. The demo performs
those three writes, then asks the six questions of the seed's table, adds a conflicting second
source and checks the boundary. The expected column is the seed's; the computed one is vigente's.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from vigente.api import Vigente
from vigente.errors import VigenteError
from vigente.kernel.statement import format_value

__all__ = ["LINEAGE", "NOW", "SEED_EVENTS", "SEED_TABLE", "run_demo"]

LINEAGE = "svc/upload-limit-mb"
NOW = "2026-09-29"  # the date of the seed article: "today" in its table
SOURCE = "policy"

#: The seed's three ingest events: (value, valid_from, known_at).
SEED_EVENTS = (
    (50, "2026-01-01", "2026-01-01"),
    (80, "2026-09-01", "2026-09-03"),
    (100, "2026-10-01", "2026-09-20"),
)


@dataclass(frozen=True)
class SeedRow:
    valid_at: str
    known_at: str
    value: int | None
    interpretation: str


#: The seed's table, as printed in the article.
SEED_TABLE = (
    SeedRow("2026-09-29", "2026-09-29", 80, "current"),
    SeedRow("2026-08-20", "2026-09-29", 50, "historical"),
    SeedRow("2026-09-02", "2026-09-29", 80, "retrospective"),
    SeedRow("2026-09-02", "2026-09-02", 50, "known_then"),
    SeedRow("2026-10-02", "2026-09-29", 100, "announced_future"),
    SeedRow("2025-12-01", "2026-09-29", None, "missing"),
)


def _mark(ok: bool) -> str:
    return "[green]✓[/]" if ok else "[red]✗[/]"


def run_demo(store: Vigente, console: Console) -> bool:
    """Run the demo against ``store`` and print it; return True when every check matches."""
    if store.history(LINEAGE):
        raise VigenteError(
            f"this database already holds {LINEAGE!r}: run the demo on a fresh database "
            "(omit --db, or give a new file)"
        )
    console.print(
        f"[bold]vigente demo[/] — the seed article's upload limit, database {store.store.url}"
    )
    console.print(f"'today' is {NOW}, the article's date.\n")
    _record_seed_events(store, console)
    _print_history(store, console)
    all_ok = _check_seed_table(store, console)
    _print_statements(store, console)
    all_ok &= _check_conflict(store, console)
    all_ok &= _check_boundary(store, console)
    console.print(
        f"\n{'[green]all checks match the seed[/]' if all_ok else '[red]MISMATCH with the seed[/]'}"
        f"\nTry: vigente --db {store.store.url} ask {LINEAGE} --at 2026-09-02 --now {NOW}"
    )
    return all_ok


def _record_seed_events(store: Vigente, console: Console) -> None:
    """The seed's three writes, each with what it closed and appended."""
    console.print(
        "[bold]Three ingest events[/] (each closes what it changes, nothing is overwritten)"
    )
    for value, valid_from, known_at in SEED_EVENTS:
        result = store.record(
            LINEAGE, value, valid_from=valid_from, known_at=known_at, source=SOURCE, now=NOW
        )
        console.print(
            f"  {known_at}: learned {value} MB valid from {valid_from} → "
            f"{len(result.closed)} snapshot(s) closed, {len(result.appended)} appended"
        )


def _print_history(store: Vigente, console: Console) -> None:
    """Every snapshot the writes left, on both axes."""
    history = Table(title="the store: every snapshot on both axes", title_justify="left")
    for name in ("version", "MB", "valid_from", "valid_to", "known_from", "known_to"):
        history.add_column(name)
    for v in store.history(LINEAGE):
        history.add_row(
            v.version_id,
            format_value(v.value),
            str(v.valid_from),
            str(v.valid_to or "—"),
            str(v.known_from),
            str(v.known_to or "—"),
        )
    console.print(history)


def _check_seed_table(store: Vigente, console: Console) -> bool:
    """The seed's six questions, computed beside the seed's answers; True when all match."""
    all_ok = True
    table = Table(title="the seed's table, computed", title_justify="left")
    for name in ("valid date t", "knowledge k", "MB", "status", "interpretation", "seed"):
        table.add_column(name)
    for row in SEED_TABLE:
        e = store.evidence(LINEAGE, valid_at=row.valid_at, known_at=row.known_at, now=NOW)
        values = [v for v in e.values]
        ok = values == ([] if row.value is None else [row.value]) and (
            e.interpretation.value == row.interpretation
        )
        all_ok &= ok
        shown = ", ".join(format_value(v) for v in values) or "—"
        table.add_row(
            row.valid_at, row.known_at, shown, e.status.value, e.interpretation.value, _mark(ok)
        )
    console.print(table)
    return all_ok


def _print_statements(store: Vigente, console: Console) -> None:
    """The statements a model receives for today and for the announced future."""
    current = store.evidence(LINEAGE, valid_at=NOW, now=NOW)
    future = store.evidence(LINEAGE, valid_at="2026-10-02", known_at=NOW, now=NOW)
    console.print("What a model receives (statements keep their qualifiers):")
    console.print(f"  • {current.statement}", markup=False)
    console.print(f"  • {future.statement}", markup=False)


def _check_conflict(store: Vigente, console: Console) -> bool:
    """A second source for September: both values come back as a conflict, and what was known
    before it arrived is unchanged; True when both hold."""
    console.print("\n[bold]Conflict[/]: a second source says 90 MB for September")
    store.record(
        LINEAGE,
        90,
        valid_from="2026-09-01",
        valid_to="2026-10-01",
        known_at="2026-09-25",
        source="second-source",
        now=NOW,
    )
    conflict = store.evidence(LINEAGE, valid_at=NOW, now=NOW)
    ok = conflict.status.value == "conflict" and set(conflict.values) == {80, 90}
    ok &= 85 not in conflict.values
    all_ok = ok
    console.print(
        f"  {_mark(ok)} status {conflict.status.value}, values "
        f"{', '.join(format_value(v) for v in conflict.values)} (no average 85, no latest-wins)"
    )
    console.print(f"  {conflict.statement}", markup=False)
    before = store.evidence(LINEAGE, valid_at="2026-09-02", known_at="2026-09-02", now=NOW)
    ok = list(before.values) == [50]
    all_ok &= ok
    console.print(f"  {_mark(ok)} the past is unchanged: as known on 2026-09-02 it was still 50")
    return all_ok


def _check_boundary(store: Vigente, console: Console) -> bool:
    """The day before and the day of the change (half-open intervals); True when both hold."""
    all_ok = True
    console.print("\n[bold]Boundary[/] (half-open intervals), as known on 2026-09-03")
    for day, expected in (("2026-08-31", 50), ("2026-09-01", 80)):
        e = store.evidence(LINEAGE, valid_at=day, known_at="2026-09-03", now=NOW)
        ok = list(e.values) == [expected]
        all_ok &= ok
        shown = ", ".join(format_value(v) for v in e.values) or "—"
        console.print(f"  {_mark(ok)} {day} → {shown}")
    return all_ok

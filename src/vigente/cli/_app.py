"""The ``vigente`` command group, its shared options and error mapping, and what every
command shares: ``--json`` (one JSON object on stdout), progress bars (on stderr, only when it
is a terminal) and the sectioned quick reference of ``vigente --help``.

Errors print ``Error: <what went wrong and how to fix it>`` on stderr and exit 1, with or
without ``--json``; usage errors exit 2.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, overload

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeRemainingColumn,
)

from vigente import telemetry
from vigente.api import Vigente
from vigente.errors import VigenteError
from vigente.kernel.statement import moment
from vigente.store.tenancy import folder_tenants, tenant_file
from vigente.time import Instant

__all__ = [
    "Counted",
    "cli",
    "console",
    "emit_json",
    "json_option",
    "knowledge",
    "main",
    "open_store",
    "parse_scope",
    "progress",
    "renamed_option",
    "scope_option",
]

T = TypeVar("T")

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_DB = "vigente.db"
# ctx.meta: the command's name (for its metric) and its span, open while it runs
_COMMAND, _SPAN = "vigente.command", "vigente.command_span"
# commands that serve until stopped: each request gets its own span, not one the length of
# the server's life
_SERVERS = frozenset({"serve", "mcp"})


# The quick reference of `vigente --help`: every top-level command, one line each, by section.
# A command missing here is listed under "Other" with its own short help.
SECTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "Facts (bitemporal evidence)": (
        ("record", "LINEAGE VALUE: a value over a valid period, as learned at K"),
        ("retract", "LINEAGE: withdraw a source's statement (history is kept)"),
        ("import", "FILE: record/retract lines (JSON Lines), all or nothing"),
        ("ask", "LINEAGE --at T [--known-at K]: the evidence and statement"),
        ("history", "LINEAGE: every snapshot on both time axes"),
        ("lineages", "what the database holds"),
        ("precedence", "SOURCES…: a dated precedence of sources (resolves conflicts)"),
        ("backfills", "the answered horizon and the recorded backfills"),
        ("demo", "the seed article's example, computed and checked"),
    ),
    "Documents (lineages of versions)": (
        ("documents", "add | import | list | show: versions with their metadata"),
        ("review", "submit | list | show | edit | approve | reject"),
        ("decisions", "list | show: recorded admissibility decisions"),
        ("derive", "KIND LABEL --from ID: a chunk or summary and its sources"),
        ("derived", "derived items; --stale: what a new version made stale"),
        ("verify", "ANSWER --evidence FILE: check a draft against evidence"),
        ("import-corpus", "legalize-ee PATH: import a real versioned corpus"),
    ),
    "Search": (
        ("search", "TEXT --at T: passages in force on T, and what was excluded"),
        ("index", "cut passages for new versions and embed them"),
    ),
    "Agent runtime and context assembly": (
        ("runtime", "import | show | transcript | artifact | purge-account | gc …"),
        ("assemble", "the next model request, built by policy, recorded"),
        ("recall", "QUERY: the most relevant records, as known at K"),
        ("explain", "ASSEMBLY_ID: what and why; --why-not, --rebuild, --diff"),
        ("policy", "show | check: context-assembly policies (TOML)"),
        ("scenario", "run FILE: replay an event log and check its expectations"),
    ),
    "Service and shell": (
        ("serve", "the HTTP API, MCP at /mcp and the web inspector at /"),
        ("mcp", "MCP over stdio, for a local agent"),
        ("keys", "create | list | role | revoke: tenant keys and their roles"),
        ("check", "stored instants no question can read back; --repair moves them"),
        ("completion", "bash | zsh | fish: print the shell completion script"),
    ),
}

EXAMPLES = """\b
Examples:
  vigente --db limits.db record svc/upload-limit-mb 80 \\
      --valid-from 2026-09-01 --known-at 2026-09-03 --source policy
  vigente --db limits.db ask svc/upload-limit-mb --at 2026-09-02 --json
  vigente --db regs.db ask cdd --at 2025-02-20 --lang it
  vigente --db regs.db search "upload limit" --at 2026-09-29

\b
Every command that prints data takes --json (one JSON object on stdout).
Errors: "Error: …" on stderr, exit status 1. Options: vigente COMMAND --help.
Shell completion: eval "$(vigente completion bash)"   (or zsh, fish)."""


class _Group(click.Group):
    """Maps vigente's own errors to ``Error: …`` with exit status 1, never a traceback, and
    lists the commands by section (``SECTIONS``) so that ``--help`` reads as a quick reference.
    """

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = [n for n in self.list_commands(ctx) if not self.commands[n].hidden]
        placed = {n for rows in SECTIONS.values() for n, _ in rows}
        width = max(len(n) for n in names)
        limit = max(formatter.width - width - 6, 30)
        other = tuple((n, self.commands[n].get_short_help_str(limit)) for n in names
                      if n not in placed)
        for title, rows in (*SECTIONS.items(), ("Other", other)):
            present = [(n.ljust(width), line) for n, line in rows if n in names]
            if present:
                with formatter.section(title):
                    formatter.write_dl(present, col_max=width + 2)

    def invoke(self, ctx: click.Context) -> Any:
        started = time.perf_counter()
        failure: BaseException | None = None
        try:
            return super().invoke(ctx)  # in the command's span (see resolve_command)
        except click.exceptions.Exit as exc:  # ctx.exit(0) is a success
            failure = None if exc.exit_code == 0 else exc
            raise
        except VigenteError as exc:
            failure = exc
            telemetry.refused(exc, "cli")
            raise click.ClickException(str(exc)) from None
        except UnicodeEncodeError as exc:
            failure = exc
            raise click.ClickException(
                "an argument is not valid UTF-8: re-encode it as UTF-8"
            ) from None
        except BaseException as exc:
            failure = exc
            raise
        finally:
            command_span = ctx.meta.pop(_SPAN, None)
            if command_span is not None:
                command_span.close(failure)
                telemetry.record_operation("cli", ctx.meta[_COMMAND],
                                           "ok" if failure is None else "error",
                                           time.perf_counter() - started)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and _COMMAND not in ctx.meta and name not in _SERVERS:
            # ``ask``, ``documents add``: the command's name, never an argument's value
            full = str(command.name)
            if isinstance(command, click.Group) and rest and rest[0] in command.commands:
                full += " " + rest[0]
            ctx.meta[_COMMAND] = full
            ctx.meta[_SPAN] = telemetry.CurrentSpan(f"vigente {full}",
                                                    {"vigente.cli.command": full})
        return name, command, rest


def emit_json(data: object) -> None:
    """Print ``data`` as one JSON object (or array) on one line of stdout."""
    click.echo(json.dumps(data, ensure_ascii=False))


def json_option(func: F) -> F:
    """``--json``: the command prints one JSON object on stdout instead of text."""
    return click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON object on stdout."
    )(func)


def renamed_option(old: str, new: str, dest: str) -> Callable[[F], F]:
    """Accept ``old``, an earlier spelling of the option ``new`` (whose value goes to ``dest``),
    as a deprecated alias: the command behaves as if ``new`` were given, after a warning on
    stderr; both given with different values is a usage error (docs/vocabulary.md). Put it
    below ``@click.command`` and beside the options, as any option decorator."""
    hidden = f"deprecated_{dest}"

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def command(*args: Any, **kwargs: Any) -> Any:
            value = kwargs.pop(hidden)
            if value is not None:
                click.echo(f"Warning: {old} is deprecated; use {new}", err=True)
                if kwargs.get(dest) is not None and kwargs[dest] != value:
                    raise click.UsageError(f"{old} and {new} disagree; give one ({new})")
                kwargs[dest] = value
            return func(*args, **kwargs)

        return click.option(old, hidden, hidden=True, help=f"Deprecated: use {new}.")(
            command)  # type: ignore[return-value]

    return decorate


def knowledge(k: Instant, now: Instant) -> str:
    """``k`` for a header line: "now (2026-12-01 10:28 UTC)" when the question was as known
    now, else the instant readably."""
    return f"now ({moment(k)})" if k == now else moment(k)


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stderr
        return False


@contextmanager
def progress(description: str, total: int | None = None) -> Iterator[
        Callable[..., None]]:
    """A progress bar for long work, on stderr and only when stderr is a terminal: stdout
    (text or ``--json``) and pipes never see it. Yields ``step(done, total=None,
    description=None)``."""
    err = Console(stderr=True, highlight=False)
    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                   MofNCompleteColumn(), TimeRemainingColumn(), console=err, transient=True,
                   disable=not _stderr_is_terminal())
    task = bar.add_task(description, total=total)  # before the first frame, so it shows
    with bar:

        def step(done: int, total: int | None = None, description: str | None = None) -> None:
            fields: dict[str, Any] = {"completed": done}
            if total is not None:
                fields["total"] = total
            if description is not None:
                fields["description"] = description
            bar.update(task, **fields)

        yield step


class Counted(Sequence[T]):
    """The lines of an import, reporting each one read to ``step`` (and "writing" after the
    last one), so that an import that takes lines can show its progress unchanged."""

    def __init__(self, items: Sequence[T], step: Callable[..., None],
                 writing: str = "writing") -> None:
        self._items = items
        self._step = step
        self._writing = writing

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        return self._items[index]

    def __iter__(self) -> Iterator[T]:
        total = len(self._items)
        for number, item in enumerate(self._items, start=1):
            if number % 256 == 0 or number == total:
                self._step(number, total)
            yield item
        self._step(total, total, self._writing)


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


def _not_a_service_root(db: str) -> None:
    """--db names one store; the folder `vigente serve` keeps its tenants in holds many."""
    tenants = folder_tenants(db)
    if tenants is not None:
        listed = f" (tenants here: {', '.join(tenants[:10])})" if tenants else ""
        raise click.ClickException(
            f"{db} is the data folder of `vigente serve`, which holds one store per tenant"
            f"{listed}: point --db at one tenant's file, {tenant_file(db, 'NAME')}")
    if Path(db).is_dir():
        raise click.ClickException(
            f"{db} is a folder: --db takes a SQLite file (created if absent) or a "
            "postgresql:// URL")


def open_store(ctx: click.Context) -> Vigente:
    obj = ctx.ensure_object(dict)
    store: Vigente | None = obj.get("store")
    if store is None:
        db = obj.get("db") or os.environ.get("VIGENTE_DB") or DEFAULT_DB
        _not_a_service_root(db)
        store = Vigente.open(db, default_zone=obj.get("default_zone"))
        obj["store"] = store
        ctx.call_on_close(store.close)
    return store


@click.group(cls=_Group, epilog=EXAMPLES)
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
    """vigente: what an agent may treat as true, for which date, as known when.

    Facts and documents are answered at a valid date (--at) as known at a knowledge date
    (--known-at, default now). Dates are YYYY-MM-DD or RFC 3339 with an offset."""
    ctx.ensure_object(dict).update(db=db, default_zone=default_zone)


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script: eval "$(vigente completion bash)"."""
    from click.shell_completion import get_completion_class

    complete = get_completion_class(shell)
    assert complete is not None  # the choice allows only the shells click knows
    click.echo(complete(cli, {}, "vigente", "_VIGENTE_COMPLETE").source())


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``vigente`` script; telemetry as the ``OTEL_*`` variables ask
    (flushed when the command ends)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # (a meter provider is set once: `serve --metrics` needs its Prometheus reader in it)
        configured = telemetry.configure_from_environment(prometheus="--metrics" in args)
    except VigenteError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    try:
        cli.main(args=args, prog_name="vigente")
    finally:
        if configured is not None:
            configured.shutdown()



"""Service commands: ``serve`` (the HTTP API and MCP over HTTP) and ``mcp`` (MCP over stdio)."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import click

from vigente.cli._app import cli, open_store
from vigente.cli._workers import serve_workers
from vigente.errors import InvalidInput

DEFAULT_DATA = "vigente-data"


def _need_serve_extra() -> None:
    try:
        import fastapi  # noqa: F401
        import jinja2  # noqa: F401  (the web inspector)
        import mcp  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise click.ClickException(
            f"serving needs the serve extra ({exc}): pip install 'vigente[serve]'"
        ) from None


def _admin_key(path: Path | None) -> str | None:
    if path is None:
        key = os.environ.get("VIGENTE_ADMIN_KEY") or None
        where = "VIGENTE_ADMIN_KEY"
    else:
        try:
            key = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(
                f"cannot read the admin key file {path} ({exc}): give a UTF-8 text file "
                "holding the key"
            ) from None
        where = str(path)
    if key is not None and len(key) < 16:
        raise InvalidInput(
            f"the admin key in {where} is shorter than 16 characters: use a long random key "
            "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    return key


@cli.command()
@click.option(
    "--db",
    "root",
    metavar="DIR|URL",
    help="A folder for one SQLite file per tenant (created when missing) or a "
    f"postgresql:// URL for one schema per tenant (default: the global --db, "
    f"$VIGENTE_DATA or {DEFAULT_DATA}).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--admin-key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File holding the admin key (default: $VIGENTE_ADMIN_KEY).",
)
@click.option(
    "--rate",
    default=20.0,
    show_default=True,
    type=click.FloatRange(min=0.01),
    help="Requests per second allowed to each key (token bucket, in this process).",
)
@click.option(
    "--burst",
    default=100,
    show_default=True,
    type=click.IntRange(min=1),
    help="Requests each key may send at once.",
)
@click.option(
    "--max-body-bytes",
    default=8 * 1024 * 1024,
    show_default=True,
    type=click.IntRange(min=1024),
    help="Largest request body accepted.",
)
@click.option("--no-mcp", is_flag=True, help="Do not mount the MCP endpoint at /mcp.")
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Server processes sharing the port (about one per core). Each opens its own "
    "connections and loads its own embedding model; the rate limit is per process.",
)
@click.option(
    "--metrics",
    is_flag=True,
    help="Serve the metrics at /metrics in the Prometheus text format, to the admin key "
    "(the otel extra). Traces and OTLP metrics follow the OTEL_* variables.",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: one object per line, with the trace and span ids of the request.",
)
@click.option(
    "--access-log/--no-access-log",
    default=True,
    show_default=True,
    help="One line per request: method, route template (never the ids in the path), status, "
    "time.",
)
@click.pass_context
def serve(
    ctx: click.Context,
    root: str | None,
    host: str,
    port: int,
    admin_key_file: Path | None,
    rate: float,
    burst: int,
    max_body_bytes: int,
    no_mcp: bool,
    workers: int,
    metrics: bool,
    log_format: str,
    access_log: bool,
) -> None:
    """Serve the HTTP API (its OpenAPI document at /openapi.json), MCP at /mcp and the web
    inspector at /."""
    _need_serve_extra()
    import uvicorn

    from vigente.http import CONFIG_VARIABLE, ServiceConfig, TenantRegistry, create_app

    data = (
        root or ctx.ensure_object(dict).get("db") or os.environ.get("VIGENTE_DATA") or DEFAULT_DATA
    )
    if metrics and workers > 1:
        raise InvalidInput(
            "--metrics serves one process's metrics, and --workers spreads the requests over "
            "several: with workers, push the metrics instead (OTEL_METRICS_EXPORTER=otlp and "
            "OTEL_EXPORTER_OTLP_ENDPOINT; each worker reports as its own service.instance.id)"
        )
    key = _admin_key(admin_key_file)
    if key is None:
        click.echo(
            "note: no admin key (VIGENTE_ADMIN_KEY or --admin-key-file): tenants and "
            "keys cannot be created",
            err=True,
        )
    config = ServiceConfig(
        data,
        admin_key=key,
        rate=rate,
        burst=burst,
        max_body_bytes=max_body_bytes,
        mcp=not no_mcp,
        host=host,
        preload_model=True,
        access_log=access_log,
        metrics=metrics,
    )
    # vigente's access log names each route's template, never the ids in its path (which a
    # purge must be able to erase): uvicorn's own, which prints raw paths, is off.
    settings: dict[str, Any] = {"log_level": "info", "access_log": False,
                                "log_config": _log_config(log_format)}
    if workers == 1:
        uvicorn.run(create_app(config), host=host, port=port, **settings)
        return
    # Worker processes build the application themselves, so the configuration travels in the
    # environment. Create the registry (and migrate it) once here, not in N racing workers.
    TenantRegistry(config.root, admin_key=config.admin_key).close()
    os.environ[CONFIG_VARIABLE] = config.to_environment()
    serve_workers(host, port, workers, settings)


def _log_config(log_format: str = "text") -> dict[str, Any]:
    """uvicorn's logging, with vigente's loggers (the access log among them) on its handler;
    ``json``: every line (uvicorn's too) one JSON object with the request's trace ids."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["vigente"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    if log_format == "json":
        json_formatter = {"()": "vigente.telemetry.JsonFormatter"}
        config["formatters"] = {"default": json_formatter, "access": json_formatter}
    return config


def mcp_tools() -> list[tuple[str, str]]:
    """(name, first sentence of its description) of every tool the MCP server registers."""
    import asyncio

    from vigente.mcp_server import build_server

    def nothing(_: Any) -> Any:  # listing tools serves no store
        raise RuntimeError("no store")

    tools = asyncio.run(build_server(nothing).list_tools())
    return [(t.name, " ".join((t.description or "").split()).split(". ", 1)[0].rstrip(".") + ".")
            for t in tools]


class _MCPCommand(click.Command):
    """``vigente mcp``: its help lists the tools the server registers (never a copy)."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help_text(ctx, formatter)
        try:
            tools = mcp_tools()
        except ImportError:  # without the serve extra the command says so when run
            return
        with formatter.section(f"Tools ({len(tools)})"):
            formatter.write_dl(tools)


@cli.command("mcp", cls=_MCPCommand)
@click.option("--conversation", default=None, metavar="ID",
              help="Scope the client to this conversation (its reads and writes).")
@click.option("--participant", default=None, metavar="ID",
              help="With --conversation: the participant the client acts as (a recall or "
              "assembly that names none uses it).")
@click.pass_context
def mcp_command(ctx: click.Context, conversation: str | None, participant: str | None) -> None:
    """Serve the --db store to an MCP client over stdio (the tools below; lineages as
    resources vigente://lineages and vigente://lineages/{lineage}). The client is a model's,
    so it acts as an agent: it writes no instruction (system message, skill state, read-only
    tool), share or promotion; what it logs is recorded as its claim ("vigente mcp"); it
    reads only what one participant may see. Log the application's own records with
    `vigente runtime import`."""
    _need_serve_extra()
    from vigente.application.roles import check_role
    from vigente.mcp_server import serve_stdio

    check_role("agent", conversation, participant)  # a bad scope: Error, before serving
    serve_stdio(open_store(ctx), conversation=conversation, participant=participant)

"""``python -m vigente.bench <name> [--json] [options]`` — see :mod:`vigente.bench`.

Progress goes to stderr. By default the figures are printed as a table; with ``--json`` the
last line of stdout is one JSON object of all figures (``all`` prints one object keyed by
benchmark name).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console

from vigente.bench import MODULES, load
from vigente.errors import VigenteError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m vigente.bench", description="Run vigente's benchmarks."
    )
    commands = parser.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    every = commands.add_parser("all", help="run every benchmark with its default options")
    every.add_argument("--json", action="store_true", help="print one JSON object last")
    for name in MODULES:
        benchmark = load(name)
        sub = commands.add_parser(name, help=benchmark.help, description=benchmark.help)
        sub.add_argument("--json", action="store_true", help="print one JSON object last")
        benchmark.add_arguments(sub)
    return parser


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # so that a terminated run still removes what it made


def main(argv: Sequence[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _stop)
    parser = _parser()
    args = parser.parse_args(argv)
    console = Console(highlight=False)
    log = Console(stderr=True, highlight=False, markup=False)
    if args.benchmark == "all":
        results: dict[str, Any] = {}
        for name in MODULES:
            benchmark = load(name)
            sub = argparse.ArgumentParser()
            benchmark.add_arguments(sub)
            figures = benchmark.run(sub.parse_args([]), log)
            results[name] = figures
            if not args.json:
                benchmark.render(figures, console)
        if args.json:
            print(json.dumps(results, sort_keys=True))
        return 0
    benchmark = load(args.benchmark)
    try:
        figures = benchmark.run(args, log)
    except VigenteError as exc:  # bad input (a --db that cannot be opened, …): no traceback
        log.print(f"Error: {exc}")
        return 1
    if args.json:
        sys.stdout.write(json.dumps(figures, sort_keys=True) + "\n")
    else:
        benchmark.render(figures, console)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

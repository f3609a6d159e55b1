"""Benchmarks: ``python -m vigente.bench <name> [options]``; ``all`` runs every one.

Each benchmark is a module under ``vigente.bench`` that exposes ``BENCHMARK``, an object with
the :class:`Benchmark` shape. Adding one (``retrieval``, …) means writing that module and adding
its name to :data:`MODULES`; the command line, ``all`` and ``make bench`` pick it up.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any, Protocol

from rich.console import Console

__all__ = ["MODULES", "Benchmark", "load"]

#: Benchmark name -> module that defines ``BENCHMARK`` (imported only when used).
MODULES: dict[str, str] = {
    "kernel": "vigente.bench.kernel",
    "retrieval": "vigente.bench.retrieval",
    "runtime": "vigente.bench.runtime",
    "context": "vigente.bench.context",
    "serve": "vigente.bench.serve",
    "integrations": "vigente.bench.integrations",
    "memory": "vigente.bench.memory",
    "telemetry": "vigente.bench.telemetry",
    "horizon": "vigente.bench.horizon",
    "bodies": "vigente.bench.bodies",
    "dialogue": "vigente.bench.dialogue",
}


class Benchmark(Protocol):
    """One benchmark: its options, a run that returns every figure, and a readable report."""

    name: str
    help: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add this benchmark's options (``--json`` is added for every benchmark)."""

    def run(self, args: argparse.Namespace, log: Console) -> dict[str, Any]:
        """Run and return the figures as one JSON-serialisable object; progress goes to ``log``."""

    def render(self, figures: dict[str, Any], console: Console) -> None:
        """Print the figures as a table for people."""


def load(name: str) -> Benchmark:
    """The benchmark called ``name`` (a key of :data:`MODULES`)."""
    module = importlib.import_module(MODULES[name])
    benchmark: Benchmark = module.BENCHMARK
    return benchmark

"""The ``vigente`` command line: a thin surface over :class:`vigente.Vigente`.

Errors print ``Error: <what went wrong and how to fix it>`` and exit 1; usage errors exit 2.
"""

from __future__ import annotations

from vigente.cli import (  # noqa: F401
    _assemble,
    _documents,
    _kernel,
    _keys,
    _recall,
    _retrieval,
    _runtime,
    _serve,
)
from vigente.cli._app import cli, main

__all__ = ["cli", "main"]

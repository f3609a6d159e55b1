"""Time ``redact_content`` on a large JSON result with and without credentials
(docs/benchmarks.md, "Redaction in place"). Run with the ``src`` to measure on PYTHONPATH."""

from __future__ import annotations

import json
import time

from vigente.runtime.redact import redact_content


def _row(i: int) -> dict[str, object]:
    return {"id": i, "name": f"passenger {i}", "price": "10.50",
            "card": "4539 1488 0343 6467" if i % 100 == 0 else None,
            "note": "ok token" if i % 7 == 0 else "fine", "amount": 12.5}


def _time(label: str, text: str) -> None:
    started = time.perf_counter()
    _, found = redact_content(text, "json")
    print(f"{label}: {len(text) / 1e6:.1f} MB, {time.perf_counter() - started:.2f} s, "
          f"{len(found)} redactions")


if __name__ == "__main__":
    _time("with credentials", json.dumps({"rows": [_row(i) for i in range(40_000)]}))
    _time("without", json.dumps({"rows": [{"id": i, "name": f"p {i}", "amount": 12.5}
                                          for i in range(80_000)]}))

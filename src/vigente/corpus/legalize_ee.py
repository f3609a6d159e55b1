"""The legalize-ee corpus: 4,121 consolidated versions of 1,037 Estonian acts (Riigi Teataja).

The first mapping of the generic reader (:mod:`vigente.corpus.reader`). The source states
``effective_until`` as the last day in force (inclusive), so ``valid_to`` is the day after;
``publication_date`` is when a version could be known; ``act`` is the lineage and ``commit``
the version's external id. Publication dates of 1900-01-01 are placeholders (Riigi Teataja has
been published since 1918). Run ``python -m vigente.corpus.legalize_ee PATH`` for the anomaly
report.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from vigente.corpus.mapping import SourceMapping
from vigente.corpus.reader import CorpusReader, CorpusReport, scan
from vigente.errors import VigenteError
from vigente.time import TimeLike

__all__ = ["LEGALIZE_EE", "main", "read", "report"]

LEGALIZE_EE = SourceMapping(
    name="legalize-ee",
    lineage_field="act",
    external_id_field="commit",
    valid_from_field="effective_from",
    valid_to_field="effective_until",
    valid_to_inclusive=True,
    known_from_field="publication_date",
    reference_field="rt_reference",
    title_field="title",
    url_field="source",
    text_field="text",
    attribute_fields=(
        "short_title",
        "rank",
        "status",
        "department",
        "text_type",
        "group_id",
        "original_effective_date",
        "last_updated",
    ),
    # Riigi Teataja references are digits: 12 for the electronic gazette, 5-8 for older acts.
    reference_pattern=r"\d{5,12}",
    earliest_plausible=_dt.date(1918, 1, 1),
)


def read(path: str | Path, *, as_of: TimeLike | None = None) -> CorpusReader:
    """A streaming reader of the corpus at ``path`` (iterate it for one lineage at a time)."""
    return CorpusReader(path, LEGALIZE_EE, as_of=as_of)


def report(path: str | Path, *, as_of: TimeLike | None = None) -> CorpusReport:
    """Read the whole corpus and return every anomaly (texts are not kept)."""
    return scan(path, LEGALIZE_EE, as_of=as_of)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vigente.corpus.legalize_ee",
        description="Read the legalize-ee corpus and report every anomaly.",
    )
    parser.add_argument("path", help="versions.jsonl.xz")
    parser.add_argument(
        "--as-of",
        help="reference date for future versions (YYYY-MM-DD; default: the corpus' latest "
        "publication date)",
    )
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    args = parser.parse_args(argv)
    try:
        result = report(args.path, as_of=args.as_of or "9999-12-31")
        if args.as_of is None and result.latest_publication is not None:
            result = report(args.path, as_of=result.latest_publication)
    except VigenteError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result.as_dict(), indent=2) if args.json else result.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

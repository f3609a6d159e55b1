"""Stream a versioned corpus (JSON Lines, optionally xz/gzip) into lineages with anomalies.

:class:`CorpusReader` reads one line at a time, groups the adjacent lines of a lineage and maps
each group with :func:`map_lineage` — a pure function of the lines and the
:class:`~vigente.corpus.mapping.SourceMapping` — into a :class:`LineageImport`: typed versions
ordered by start date, excluded lines with reasons, and every anomaly. Checks that need the
whole corpus (a reference or external id used twice) are made as the stream goes; the
:class:`CorpusReport` at the end counts everything.
"""

from __future__ import annotations

import collections
import datetime as _dt
import gzip
import json
import lzma
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from vigente.corpus.mapping import (
    Anomaly,
    AnomalyKind,
    CorpusFileError,
    ExcludedRecord,
    KnowledgeStep,
    SourceMapping,
    VersionRecord,
)
from vigente.time import Instant, Interval, TimeLike, to_instant, today

__all__ = ["CorpusReader", "CorpusReport", "LineageImport", "map_lineage", "read_rows", "scan"]

_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
Row = tuple[int, Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class LineageImport:
    """One lineage as read: usable versions (by start date), excluded lines, anomalies."""

    lineage_id: str
    versions: tuple[VersionRecord, ...]
    excluded: tuple[ExcludedRecord, ...] = ()
    anomalies: tuple[Anomaly, ...] = ()

    def knowledge_steps(self) -> tuple[KnowledgeStep, ...]:
        """The statements that replay this lineage on the knowledge axis, oldest first: each
        version as published, then its closing when the end became known."""
        steps: list[KnowledgeStep] = []
        for v in self.versions:
            published_with_end = v.end_known_from is not None and v.end_known_from == v.known_from
            first_end = v.valid_to if published_with_end else None
            steps.append(
                KnowledgeStep(v.known_from, v.lineage_id, v.external_id, v.valid_from, first_end)
            )
            if v.end_known_from is not None and not published_with_end:
                steps.append(
                    KnowledgeStep(
                        v.end_known_from, v.lineage_id, v.external_id, v.valid_from, v.valid_to
                    )
                )
        return tuple(sorted(steps, key=lambda s: (s.known_at, s.valid_from, s.external_id)))


def _day(raw: object) -> _dt.date | None:
    """A ``YYYY-MM-DD`` field; ``None`` when absent; ``ValueError`` when malformed."""
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str) or not _ISO_DAY.match(raw):
        raise ValueError(f"{raw!r} is not YYYY-MM-DD")
    return _dt.date.fromisoformat(raw)


def _text(row: Mapping[str, Any], name: str | None) -> str | None:
    if name is None:
        return None
    value = row.get(name)
    return None if value is None or value == "" else str(value)


class _Lineage:
    """Builds one :class:`LineageImport` (the intermediate state of :func:`map_lineage`)."""

    def __init__(self, lineage_id: str, mapping: SourceMapping, as_of: Instant) -> None:
        self.lineage_id = lineage_id
        self.mapping = mapping
        self.as_of = as_of
        self.anomalies: list[Anomaly] = []
        self.excluded: list[ExcludedRecord] = []

    def note(
        self,
        kind: AnomalyKind,
        message: str,
        ids: Sequence[str] = (),
        lines: Sequence[int] = (),
        period: Interval | None = None,
    ) -> None:
        self.anomalies.append(
            Anomaly(kind, self.lineage_id, message, tuple(ids), tuple(lines), period)
        )

    def exclude(self, line: int, external_id: str, kind: AnomalyKind, message: str) -> None:
        self.excluded.append(ExcludedRecord(line, self.lineage_id, external_id, kind, message))
        self.note(kind, message, [external_id], [line])

    def version(self, line: int, row: Mapping[str, Any]) -> VersionRecord | None:
        """The version line ``line`` describes, its anomalies noted; ``None`` when the line
        is excluded (the reason recorded)."""
        m = self.mapping
        ext = _text(row, m.external_id_field) or f"line:{line}"
        dates = self._dates(line, ext, row)
        if dates is None:
            return None
        start, last, published = dates
        period = self._period(line, ext, start, last)
        if period is None:
            return None
        start, end = period
        known, published = self._known_from(line, ext, start, last, published)
        reference = self._reference(line, ext, row)
        if Instant.from_date(start) > self.as_of:
            self.note(
                AnomalyKind.FUTURE_VERSION,
                f"{ext} takes effect on {start}, after {self.as_of}",
                [ext],
                [line],
            )
        return VersionRecord(
            lineage_id=self.lineage_id,
            external_id=ext,
            line_number=line,
            valid_from=Instant.from_date(start),
            valid_to=None if end is None else Instant.from_date(end),
            valid_to_basis=None if end is None else "source",
            known_from=Instant.from_date(known),
            published=None if published is None else Instant.from_date(published),
            reference=reference,
            title=_text(row, m.title_field),
            url=_text(row, m.url_field),
            attributes=tuple(
                (k, str(row[k])) for k in m.attribute_fields if row.get(k) is not None
            ),
            text=_text(row, m.text_field),
        )

    def _dates(
        self, line: int, ext: str, row: Mapping[str, Any]
    ) -> tuple[_dt.date | None, _dt.date | None, _dt.date | None] | None:
        """The line's start, last day in force and publication date; a malformed one is
        noted and ignored, but a malformed start excludes the line (``None``)."""
        m = self.mapping
        dates: dict[str, _dt.date | None] = {}
        for name in (m.valid_from_field, m.valid_to_field, m.known_from_field):
            try:
                dates[name] = _day(row.get(name))
            except ValueError as exc:
                dates[name] = None
                if name == m.valid_from_field:
                    self.exclude(line, ext, AnomalyKind.MALFORMED_DATE, f"{name}: {exc}")
                    return None
                self.note(
                    AnomalyKind.MALFORMED_DATE, f"{ext}: {name} {exc}; ignored", [ext], [line]
                )
        return dates[m.valid_from_field], dates[m.valid_to_field], dates[m.known_from_field]

    def _period(
        self, line: int, ext: str, start: _dt.date | None, last: _dt.date | None
    ) -> tuple[_dt.date, _dt.date | None] | None:
        """The half-open valid period ``[start, end)`` (the source's inclusive last day made
        exclusive, when the mapping says so); ``None`` when the line has no start or ends
        before it starts, and is excluded."""
        m = self.mapping
        if start is None:
            self.exclude(
                line,
                ext,
                AnomalyKind.MISSING_VALID_FROM,
                f"{ext} has no {m.valid_from_field}: it cannot be placed in time",
            )
            return None
        end = last
        if last is not None and m.valid_to_inclusive:
            # no day follows 9999-12-31: in force through it is in force with no known end
            end = None if last == _dt.date.max else last + _dt.timedelta(days=1)
        if end is not None and end <= start:
            self.exclude(
                line,
                ext,
                AnomalyKind.INVERTED_INTERVAL,
                f"{ext} ends ({m.valid_to_field} {last}) before it starts "
                f"({m.valid_from_field} {start})",
            )
            return None
        return start, end

    def _known_from(
        self,
        line: int,
        ext: str,
        start: _dt.date,
        last: _dt.date | None,
        published: _dt.date | None,
    ) -> tuple[_dt.date, _dt.date | None]:
        """When the version became known, and its publication date as kept: without a
        plausible publication date it is known from its start (noted); one after the start
        is kept and noted as retroactive."""
        m = self.mapping
        known = published
        if published is None:
            self.note(
                AnomalyKind.MISSING_KNOWN_FROM,
                f"{ext} has no {m.known_from_field}: known from its start {start}",
                [ext],
                [line],
            )
            known = start
        elif m.earliest_plausible is not None and published < m.earliest_plausible:
            self.note(
                AnomalyKind.PLACEHOLDER_DATE,
                f"{ext}: {m.known_from_field} {published} is a placeholder (before "
                f"{m.earliest_plausible}); known from its start {start}",
                [ext],
                [line],
            )
            known, published = start, None
        elif published > start:
            after_end = (
                f", after it had already ended ({last})" if last and published > last else ""
            )
            self.note(
                AnomalyKind.RETROACTIVE_PUBLICATION,
                f"{ext} took effect on {start} but was published on {published} "
                f"({(published - start).days} days later){after_end}",
                [ext],
                [line],
            )
        assert known is not None
        return known, published

    def _reference(self, line: int, ext: str, row: Mapping[str, Any]) -> str | None:
        """The line's official reference, noted when missing or not in the corpus' format
        (kept as given)."""
        m = self.mapping
        reference = _text(row, m.reference_field)
        if m.reference_field is not None and reference is None:
            self.note(
                AnomalyKind.MISSING_REFERENCE, f"{ext} has no {m.reference_field}", [ext], [line]
            )
        elif reference and m.reference_pattern and not re.fullmatch(m.reference_pattern, reference):
            self.note(
                AnomalyKind.MALFORMED_REFERENCE,
                f"{ext}: {m.reference_field} {reference!r} is not in the corpus' format; "
                "kept as given",
                [ext],
                [line],
            )
        return reference

    def order(self, versions: list[VersionRecord]) -> list[VersionRecord]:
        """Sort by start date (stable), reporting lines listed out of order."""
        for before, after in zip(versions, versions[1:], strict=False):
            if after.valid_from < before.valid_from:
                self.note(
                    AnomalyKind.NON_MONOTONIC_ORDER,
                    f"{after.external_id} (from {after.valid_from}) is listed after "
                    f"{before.external_id} (from {before.valid_from})",
                    [before.external_id, after.external_id],
                    [before.line_number, after.line_number],
                )
        return sorted(versions, key=lambda v: v.valid_from)

    def close_open_ends(self, versions: list[VersionRecord]) -> list[VersionRecord]:
        """An open-ended version followed by a later one ends where that one starts."""
        result = []
        for i, v in enumerate(versions):
            later = next((w for w in versions[i + 1 :] if w.valid_from > v.valid_from), None)
            if v.valid_to is None and later is not None:
                self.note(
                    AnomalyKind.OPEN_END_CLOSED,
                    f"{v.external_id} is open-ended in the source but {later.external_id} "
                    f"starts on {later.valid_from}: closed there",
                    [v.external_id, later.external_id],
                    [v.line_number, later.line_number],
                )
                v = replace(v, valid_to=later.valid_from, valid_to_basis="successor")
            result.append(v)
        return result

    def gaps_and_overlaps(self, versions: list[VersionRecord]) -> None:
        for i, v in enumerate(versions):
            earlier = versions[:i]
            if earlier:
                ends = [u.valid_to for u in earlier]
                reach = None if None in ends else max(e for e in ends if e is not None)
                if reach is not None and v.valid_from > reach:
                    last = max(earlier, key=lambda u: (u.valid_to, u.valid_from))
                    self.note(
                        AnomalyKind.GAP,
                        f"no version is valid from {reach} until {v.valid_from}, between "
                        f"{last.external_id} and {v.external_id}",
                        [last.external_id, v.external_id],
                        [last.line_number, v.line_number],
                        Interval(reach, v.valid_from),
                    )
            for u in earlier:
                if u.valid_to is None or u.valid_to > v.valid_from:
                    ends_at = [e for e in (u.valid_to, v.valid_to) if e is not None]
                    period = Interval(v.valid_from, min(ends_at) if ends_at else None)
                    self.note(
                        AnomalyKind.OVERLAP,
                        f"{u.external_id} and {v.external_id} are both valid over {period}",
                        [u.external_id, v.external_id],
                        [u.line_number, v.line_number],
                        period,
                    )

    def end_knowledge(self, versions: list[VersionRecord]) -> list[VersionRecord]:
        """When each end became known: the next version's publication, else the version's own."""
        result = []
        for i, v in enumerate(versions):
            if v.valid_to is None:
                result.append(v)
                continue
            nxt = next((w for w in versions[i + 1 :] if w.valid_from > v.valid_from), None)
            if nxt is None:
                result.append(
                    replace(v, end_known_from=v.known_from, end_known_basis="own_publication")
                )
            else:
                known = max(nxt.known_from, v.known_from)
                result.append(
                    replace(v, end_known_from=known, end_known_basis="successor_publication")
                )
        return result

    def repeated_references(self, versions: list[VersionRecord]) -> None:
        counts = Counter(v.reference for v in versions if v.reference)
        for reference, n in sorted(counts.items()):
            if n > 1:
                same = [v for v in versions if v.reference == reference]
                self.note(
                    AnomalyKind.REPEATED_REFERENCE,
                    f"reference {reference} is on {n} versions of this lineage",
                    [v.external_id for v in same],
                    [v.line_number for v in same],
                )


def map_lineage(
    lineage_id: str, rows: Sequence[Row], mapping: SourceMapping, *, as_of: TimeLike
) -> LineageImport:
    """Map the lines of one lineage to versions on half-open axes, with every anomaly.

    ``as_of`` is the reference date for future versions. Pure: the same lines give the same
    import.
    """
    state = _Lineage(lineage_id, mapping, to_instant(as_of))
    versions = [v for line, row in rows if (v := state.version(line, row)) is not None]
    versions = state.order(versions)
    versions = state.close_open_ends(versions)
    state.gaps_and_overlaps(versions)
    versions = state.end_knowledge(versions)
    state.repeated_references(versions)
    return LineageImport(lineage_id, tuple(versions), tuple(state.excluded), tuple(state.anomalies))


def _open(path: Path) -> IO[str]:
    try:
        if path.suffix == ".xz":
            return lzma.open(path, "rt", encoding="utf-8")
        if path.suffix == ".gz":
            return gzip.open(path, "rt", encoding="utf-8")
        return path.open(encoding="utf-8")
    except FileNotFoundError:
        raise CorpusFileError(f"corpus file {path} does not exist: check the path") from None
    except IsADirectoryError:
        raise CorpusFileError(f"{path} is a directory: give the corpus file itself") from None
    except OSError as exc:
        raise CorpusFileError(f"cannot open {path}: {exc.strerror or exc}") from None


def read_rows(path: str | Path) -> Iterator[tuple[int, Mapping[str, Any] | None, str | None]]:
    """``(line_number, object, None)`` per JSON line, or ``(line_number, None, error)`` for a
    line that is not a JSON object. Blank lines are skipped."""
    where = Path(path)
    with _open(where) as handle:
        number = 0
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError as exc:
                    yield number, None, f"not JSON ({exc})"
                    continue
                if isinstance(obj, dict):
                    yield number, obj, None
                else:
                    yield number, None, f"a JSON {type(obj).__name__}, not an object"
        except (lzma.LZMAError, gzip.BadGzipFile, EOFError) as exc:
            raise CorpusFileError(
                f"{where} is damaged or not {where.suffix} compressed (after line {number}): {exc}"
            ) from None
        except UnicodeDecodeError:
            raise CorpusFileError(f"{where} is not UTF-8 (after line {number})") from None


@dataclass(frozen=True, slots=True)
class CorpusReport:
    """Everything one pass over a corpus found: counts and every anomaly, with lineage ids."""

    mapping: str
    path: str
    as_of: Instant
    lines: int
    lineages: int
    versions: int
    excluded: tuple[ExcludedRecord, ...]
    anomalies: tuple[Anomaly, ...]
    latest_publication: Instant | None = None

    def counts(self) -> dict[str, int]:
        """Anomalies by kind (every kind listed, zeros included)."""
        found = Counter(a.kind for a in self.anomalies)
        return {kind.value: found.get(kind, 0) for kind in AnomalyKind}

    def lineages_with(self, kind: AnomalyKind) -> tuple[str, ...]:
        return tuple(sorted({a.lineage_id for a in self.anomalies if a.kind is kind}))

    def as_dict(self) -> dict[str, Any]:
        return {
            "mapping": self.mapping,
            "path": self.path,
            "as_of": self.as_of.isoformat(),
            "latest_publication": None
            if self.latest_publication is None
            else self.latest_publication.isoformat(),
            "lines": self.lines,
            "lineages": self.lineages,
            "versions": self.versions,
            "excluded": len(self.excluded),
            "counts": self.counts(),
            "anomalies": [a.as_dict() for a in self.anomalies],
        }

    def summary(self, *, examples: int = 3) -> str:
        """A readable report: totals, then each anomaly kind with lineages and examples."""
        lines = [
            f"{self.mapping}: {self.lines} lines, {self.lineages} lineages, {self.versions} "
            f"versions usable, {len(self.excluded)} excluded "
            f"(future versions counted after {self.as_of}; latest publication "
            f"{self.latest_publication})",
        ]
        for kind, n in self.counts().items():
            if not n:
                continue
            kind_ = AnomalyKind(kind)
            affected = self.lineages_with(kind_)
            lines.append(f"  {kind:24} {n:5}  in {len(affected)} lineages  → {kind_.description}")
            for a in [a for a in self.anomalies if a.kind is kind_][:examples]:
                lines.append(f"      {a.lineage_id}: {a.message}")
        return "\n".join(lines)


class CorpusReader:
    """Iterate over a corpus file lineage by lineage; :meth:`report` when done.

    ``as_of`` (default: today) is the reference date for future versions; ``keep_text=False``
    leaves document texts out of the records (for scans). Each iteration reads the file from
    the start, so a report always describes one whole pass.
    """

    def __init__(
        self,
        path: str | Path,
        mapping: SourceMapping,
        *,
        as_of: TimeLike | None = None,
        keep_text: bool = True,
    ) -> None:
        self.path = path
        self.mapping = mapping
        self.as_of = today() if as_of is None else to_instant(as_of)
        self.keep_text = keep_text
        self._reset()
        self._done = False

    def _reset(self) -> None:
        self._lines = self._lineages = self._versions = 0
        self._excluded: list[ExcludedRecord] = []
        self._anomalies: list[Anomaly] = []
        self._latest: Instant | None = None
        self._references: dict[str, tuple[str, str]] = {}
        self._external_ids: set[str] = set()
        self._seen_lineages: set[str] = set()

    def __iter__(self) -> Iterator[LineageImport]:
        self._reset()
        self._done = False
        group: list[Row] = []
        current: str | None = None
        for number, obj, error in read_rows(self.path):
            self._lines = number
            if obj is None:
                self._reject(number, None, None, AnomalyKind.BAD_LINE, f"line {number}: {error}")
                continue
            lineage = _text(obj, self.mapping.lineage_field)
            if lineage is None:
                self._reject(
                    number,
                    None,
                    _text(obj, self.mapping.external_id_field),
                    AnomalyKind.MISSING_LINEAGE,
                    f"line {number} has no {self.mapping.lineage_field}",
                )
                continue
            if lineage != current and group:
                yield self._finish(current or "", group)
                group = []
            current = lineage
            group.append((number, obj))
        if group:
            yield self._finish(current or "", group)
        self._done = True

    def _reject(
        self, line: int, lineage: str | None, ext: str | None, kind: AnomalyKind, message: str
    ) -> None:
        self._excluded.append(ExcludedRecord(line, lineage, ext, kind, message))
        self._anomalies.append(
            Anomaly(kind, lineage or "", message, (ext,) if ext else (), (line,))
        )

    def _finish(self, lineage: str, group: list[Row]) -> LineageImport:
        extra: list[Anomaly] = []
        if lineage in self._seen_lineages:
            extra.append(
                Anomaly(
                    AnomalyKind.SPLIT_LINEAGE,
                    lineage,
                    f"lines of {lineage} are not adjacent (again from line "
                    f"{group[0][0]}): read as a separate group",
                    (),
                    (group[0][0],),
                )
            )
        self._seen_lineages.add(lineage)
        rows: list[Row] = []
        dropped: list[ExcludedRecord] = []
        for number, obj in group:
            ext = _text(obj, self.mapping.external_id_field)
            if ext is not None and ext in self._external_ids:
                message = f"external id {ext} was already read: line {number} excluded"
                dropped.append(
                    ExcludedRecord(number, lineage, ext, AnomalyKind.DUPLICATE_EXTERNAL_ID, message)
                )
                extra.append(
                    Anomaly(AnomalyKind.DUPLICATE_EXTERNAL_ID, lineage, message, (ext,), (number,))
                )
                continue
            if ext is not None:
                self._external_ids.add(ext)
            rows.append(
                (
                    number,
                    obj
                    if self.keep_text or not self.mapping.text_field
                    else {k: v for k, v in obj.items() if k != self.mapping.text_field},
                )
            )
        result = map_lineage(lineage, rows, self.mapping, as_of=self.as_of)
        for v in result.versions:
            if v.published is not None and (self._latest is None or v.published > self._latest):
                self._latest = v.published
            if v.reference is None:
                continue
            first = self._references.setdefault(v.reference, (lineage, v.external_id))
            if first[0] != lineage:
                extra.append(
                    Anomaly(
                        AnomalyKind.REPEATED_REFERENCE,
                        lineage,
                        f"reference {v.reference} of {v.external_id} was already "
                        f"used by {first[1]} of lineage {first[0]}",
                        (first[1], v.external_id),
                        (v.line_number,),
                        other_lineages=(first[0],),
                    )
                )
        result = replace(
            result,
            excluded=tuple(dropped) + result.excluded,
            anomalies=result.anomalies + tuple(extra),
        )
        self._lineages += 1
        self._versions += len(result.versions)
        self._excluded.extend(result.excluded)
        self._anomalies.extend(result.anomalies)
        return result

    def report(self) -> CorpusReport:
        """The report of the whole file (reads what iteration has not read yet)."""
        if not self._done:
            collections.deque(self, maxlen=0)  # read the rest of the file, keeping nothing
        return CorpusReport(
            mapping=self.mapping.name,
            path=str(self.path),
            as_of=self.as_of,
            lines=self._lines,
            lineages=self._lineages,
            versions=self._versions,
            excluded=tuple(self._excluded),
            anomalies=tuple(self._anomalies),
            latest_publication=self._latest,
        )


def scan(
    path: str | Path, mapping: SourceMapping, *, as_of: TimeLike | None = None
) -> CorpusReport:
    """Read a whole corpus (without keeping texts) and return its report."""
    return CorpusReader(path, mapping, as_of=as_of, keep_text=False).report()

"""Propose the four lineage fields of a bare document, for a person to approve.

A circular or policy imported as plain text or Markdown, without metadata, still states what it
is: its series or subject (→ ``lineage``), its official reference, when it enters into force
(→ ``valid_from``, sometimes ``valid_to``) and what it does to an earlier act (→ ``relation`` and
``predecessor``). :func:`extract` finds those statements in English and Italian and returns a
:class:`Proposal`: every field with its value, the text span it came from and a confidence, and
an explicit list of problems (a date that is no real day, a field not found). A proposal is
never admissible by itself: it waits in the review queue until a person approves it, so it
serialises to and from a JSON dict.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata

from vigente.evidence.dates import DateMention, Language, find_dates
from vigente.evidence.errors import InvalidProposal
from vigente.evidence.proposal import FIELDS, Problem, Proposal, ProposedField, Severity, Span
from vigente.evidence.references import ReferenceMention, find_references, same_reference
from vigente.evidence.text import detect_language
from vigente.records.relations import Relation

__all__ = [
    "FIELDS",
    "Problem",
    "Proposal",
    "ProposedField",
    "Span",
    "detect_language",
    "extract",
]


# -- the patterns -------------------------------------------------------------------------
def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)


_STARTS = (
    (
        0.9,
        _rx(
            r"effective date\s*:",
            r"entry into force\s*:",
            r"in force from\s*:",
            r"data di entrata in vigore\s*:",
            r"decorrenza\s*:",
            r"in vigore dal\s*:",
        ),
    ),
    (
        0.85,
        _rx(
            r"(?:shall |will )?enters? into force(?: on)?",
            r"(?:shall |will )?comes? into force(?: on)?",
            r"(?:is |shall be |will be )?in force (?:from|as of|as from)",
            r"effective (?:from|as of|as from|on)",
            r"with effect from",
            r"(?:shall )?appl(?:y|ies) (?:from|as of)",
            r"takes effect on",
            r"entra in vigore(?: il| dal)?",
            r"entrerà in vigore(?: il| dal)?",
            r"in vigore (?:dal|dall')",
            r"con decorrenza(?: dal| dall')?",
            r"a decorrere dal(?:l')?",
            r"a far data dal(?:l')?",
            r"ha efficacia (?:dal|a partire dal)",
            r"efficace dal",
            r"si applica (?:dal|a partire dal)",
            r"si applicano (?:dal|a partire dal)",
        ),
    ),
    (0.6, _rx(r"as of", r"starting from", r"a partire dal(?:l')?", r"dal(?:l')?")),
)
# (pattern, True when the date is the last day included, so valid_to is the day after)
_ENDS = (
    (
        True,
        _rx(
            r"(?:in force |valid |effective |applies )?until",
            r"(?:in force )?through",
            r"(?:in vigore |valida |valido |efficace )?(?:fino al|sino al|fino all'|sino all')",
        ),
    ),
    (
        False,
        _rx(
            r"ceases? to (?:apply|have effect) (?:on|from)",
            r"no longer applies from",
            r"expires on",
            r"cessa di (?:avere efficacia|applicarsi) (?:il|dal)",
            r"non si applica più dal",
        ),
    ),
)
_PUBLISHED = _rx(
    r"published(?: on)?",
    r"date of publication\s*:",
    r"dated",
    r"date\s*:",
    r"pubblicat[ao] (?:il|in data)",
    r"data\s*:",
    r"roma,",
    r"milano,",
    r"london,",
)
# (relation, confidence, active verb needs an act right after it to count, active, passive)
# Active verbs take the act that follows them ("replaces Circular 7/2023"); passive ones the act
# before them ("Circular 7/2023 is repealed").
_RELATIONS: tuple[tuple[Relation, float, bool, re.Pattern[str], re.Pattern[str]], ...] = (
    (
        Relation.SUPERSEDES,
        0.85,
        False,
        _rx(
            r"repeals and replaces",
            r"abroga e sostituisce",
            r"replaces",
            r"replacing",
            r"supersedes",
            r"superseding",
            r"in (?:substitution|replacement) (?:of|for)",
            r"sostituisce",
            r"sostituendo",
            r"in sostituzione (?:del|della|dello|dell'|di)",
        ),
        _rx(r"(?:is|are) (?:hereby )?(?:replaced|superseded)", r"(?:è|sono) sostituit[aeio]"),
    ),
    (
        Relation.AMENDS,
        0.8,
        True,
        _rx(
            r"amends",
            r"amending",
            r"modifica",
            r"modificando",
            r"recante modifiche (?:al|alla|allo|all')",
        ),
        _rx(r"(?:is|are) (?:hereby )?amended", r"(?:è|sono) modificat[aeio]"),
    ),
    (
        Relation.SUPPLEMENTS,
        0.8,
        True,
        _rx(
            r"supplements",
            r"supplementing",
            r"complements",
            r"integra",
            r"ad integrazione (?:del|della|dell')",
        ),
        _rx(r"(?:is|are) (?:hereby )?supplemented", r"(?:è|sono) integrat[aeio]"),
    ),
    (
        Relation.REVOKES,
        0.7,
        False,
        _rx(
            r"repeals",
            r"repealing",
            r"revokes",
            r"revoking",
            r"rescinds",
            r"abroga",
            r"abrogando",
            r"revoca",
            r"revocando",
        ),
        _rx(
            r"(?:is|are) (?:hereby )?(?:repealed|revoked)", r"(?:è|sono) (?:abrogat|revocat)[aeio]"
        ),
    ),
    (
        Relation.CORRECTS,
        0.85,
        True,
        _rx(
            r"corrigendum (?:to|of)",
            r"corrects",
            r"correcting",
            r"errata corrige (?:della|del|dello|dell'|alla|al)",
            r"rettifica",
            r"rettificando",
        ),
        _rx(r"(?:is|are) (?:hereby )?corrected", r"(?:è|sono) rettificat[aeio]"),
    ),
)
_NEGATION = re.compile(r"(?<!\w)(?:not|no|never|non|mai|né)\s+(?:\w+\s+)?$", re.IGNORECASE)
_LINEAGE_LABEL = re.compile(
    r"^[ \t>*#-]*(?:lineage|series|document series|serie|linea)\s*:\s*(?P<value>.+)$",
    re.IGNORECASE | re.MULTILINE,
)
_SUBJECT_LABEL = re.compile(
    r"^[ \t>*#-]*(?:subject|re|oggetto)[*_]*\s*:[*_\s]*(?P<value>[^*_\s].*?)[*_\s]*$",
    re.IGNORECASE | re.MULTILINE,
)
# "Corrigendum to Circular 12/2025": a corrigendum is cited by the act it corrects.
_CORRIGENDUM_OF = re.compile(
    r"(?:corrigendum (?:to|of)|errata corrige (?:della|del|dello|dell'|alla|al))\s*$",
    re.IGNORECASE,
)
_REFERENCE_LABEL = re.compile(
    r"^[ \t>*#-]*(?:reference|ref\.|riferimento|numero|protocollo)\s*:\s*(?P<value>.+)$",
    re.IGNORECASE | re.MULTILINE,
)
_WINDOW = 48  # characters between a trigger phrase and its date or reference


# where a title guessed for the lineage stops (a date's trigger) and what it does not start with
_TITLE_TRIGGER = re.compile(
    r"\b(?:in force|enters? into force|effective|published|from|in vigore|pubblicat\w*|dal|"
    r"a decorrere)\b", re.IGNORECASE)
_TITLE_OPENER = re.compile(r"[\s\W\d]*(?:(?:of|the|del|della|dei|di|la|il)\s+)*",
                           re.IGNORECASE)


def _span(text: str, start: int, end: int) -> Span:
    return Span.of(text, start, end)


def _sentence_end(text: str, start: int) -> int:
    """End of the sentence containing ``start`` (a full stop followed by a space, or a blank
    line), so that a trigger never takes a date from the next sentence."""
    match = re.compile(r"\.\s|\n\s*\n|;\s").search(text, start)
    return len(text) if match is None else match.start() + 1


def _slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


class _Extraction:
    """One run of the extractor over one text (holds the intermediate findings)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.dates = find_dates(text)
        self.references = find_references(text)
        self.fields: dict[str, ProposedField] = {}
        self.problems: list[Problem] = []
        self.relation_clauses: list[tuple[int, int]] = []

    def problem(
        self,
        code: str,
        name: str | None,
        message: str,
        span: Span | None = None,
        severity: Severity = "error",
    ) -> None:
        self.problems.append(Problem(code, name, message, span, severity))

    def _date_after(self, end: int) -> DateMention | None:
        limit = min(end + _WINDOW, _sentence_end(self.text, end))
        for mention in self.dates:
            if end <= mention.start <= limit and mention.complete:
                return mention
        return None

    def _in_relation_clause(self, position: int) -> bool:
        return any(start <= position < end for start, end in self.relation_clauses)

    def _is_own(self, ref: ReferenceMention) -> bool:
        """True when ``ref`` names the document itself (not a predecessor)."""
        own = self.fields.get("reference")
        if own is None:
            return False
        if own.span is not None and own.span.start <= ref.start < own.span.end:
            return True
        if own.note.startswith("a corrigendum"):
            return False  # every other mention of the corrected act is the predecessor
        return same_reference(ref.text, own.value)

    def relation(self) -> None:
        taken: list[tuple[int, int]] = []
        for relation, confidence, needs_ref, active, passive in _RELATIONS:
            found = [(m, False) for m in active.finditer(self.text)]
            found += [(m, True) for m in passive.finditer(self.text)]
            for match, is_passive in sorted(found, key=lambda f: f[0].start()):
                if any(s <= match.start() < e for s, e in taken):
                    continue
                if _NEGATION.search(self.text, max(0, match.start() - 16), match.start()):
                    continue  # "does not amend", "non modifica": no relation is claimed
                ref = self._act_near(match, is_passive)
                if ref is None and (needs_ref or is_passive):
                    continue  # "modifica" with no act next to it is a noun, not a relation
                taken.append((match.start(), match.end()))
                self.relation_clauses.append((match.start(), _sentence_end(self.text, match.end())))
                if "relation" in self.fields:
                    if self.fields["relation"].value != relation.value:
                        self.problem(
                            "ambiguous_relation",
                            "relation",
                            f"the text also says {match.group(0)!r} ({relation.value}); the "
                            f"proposal keeps {self.fields['relation'].value}: check which applies",
                            _span(self.text, match.start(), match.end()),
                            "warning",
                        )
                    continue
                self._propose_relation(relation, confidence, match, ref)

    def _act_near(self, match: re.Match[str], is_passive: bool) -> ReferenceMention | None:
        """The act a relation verb speaks of: the first one after an active verb, the last one
        before a passive verb, in the same sentence and not the document itself."""
        if is_passive:
            line_start = max(self.text.rfind("\n\n", 0, match.start()), 0)
            start = max(match.start() - _WINDOW * 2, line_start)
            before = [
                r
                for r in self.references
                if start <= r.start and r.end <= match.start() and not self._is_own(r)
            ]
            return before[-1] if before else None
        limit = min(match.end() + _WINDOW * 2, _sentence_end(self.text, match.end()))
        after = [
            r for r in self.references if match.end() <= r.start <= limit and not self._is_own(r)
        ]
        return after[0] if after else None

    def _propose_relation(
        self,
        relation: Relation,
        confidence: float,
        match: re.Match[str],
        ref: ReferenceMention | None,
    ) -> None:
        verb = _span(self.text, match.start(), match.end())
        note = ""
        if relation is Relation.REVOKES and match.group(0).lower().startswith(("repeal", "abrog")):
            note = "a repeal ends the predecessor; if this act also replaces it, use supersedes"
        self.fields["relation"] = ProposedField(relation.value, verb, confidence, note)
        if ref is None:
            self.problem(
                "predecessor_reference_missing",
                "predecessor",
                f"the text says {match.group(0)!r} but names no act near it: enter the "
                "predecessor's reference by hand",
                verb,
            )
            return
        start, end = min(verb.start, ref.start), max(verb.end, ref.end)
        self.fields["predecessor"] = ProposedField(
            ref.text, _span(self.text, start, end), confidence
        )

    def reference(self) -> None:
        label = _REFERENCE_LABEL.search(self.text)
        if label:
            inside = [r for r in self.references if label.start("value") <= r.start < label.end()]
            if inside:
                self._set_reference(inside[0], 0.9, "from the reference line")
                return
        header_end = _header_end(self.text)
        in_header = [r for r in self.references if r.start < header_end]
        if in_header:
            ref = in_header[0]
            line_start = self.text.rfind("\n", 0, ref.start) + 1
            lead = _CORRIGENDUM_OF.search(self.text, line_start, ref.start)
            if lead is not None:
                span = _span(self.text, lead.start(), ref.end)
                self.fields["reference"] = ProposedField(
                    span.text,
                    span,
                    0.7,
                    "a corrigendum has no number of its own: cited by the act it corrects",
                )
                self.fields["relation"] = ProposedField(Relation.CORRECTS.value, span, 0.85)
                self.fields["predecessor"] = ProposedField(ref.text, span, 0.85)
                self.relation_clauses.append((span.start, span.end))
                return
            self._set_reference(ref, 0.85, "from the document's heading")
            return
        if self.references:
            self._set_reference(self.references[0], 0.5, "first act named in the text")
            return
        self.problem(
            "missing_field",
            "reference",
            "no official reference (such as 'Circular 12/2025' or 'Circolare n. 12/2025') was "
            "found: enter the reference by hand",
        )

    def _set_reference(self, ref: ReferenceMention, confidence: float, note: str) -> None:
        self.fields["reference"] = ProposedField(
            ref.text, _span(self.text, ref.start, ref.end), confidence, note
        )

    def title_and_lineage(self) -> None:
        header_end = _header_end(self.text)
        first = next((m for m in re.finditer(r"^.*\S.*$", self.text, re.MULTILINE)), None)
        if first is not None and first.start() < header_end:
            title = first.group(0).strip().lstrip("#").strip()
            start = self.text.index(title, first.start()) if title else 0
            # a heading that opens with the act's reference ("Circular 7/2023. Customer due
            # diligence") is titled by what follows it; one where the reference opens a
            # sentence ("Circular 9/2025 of the Bank, in force from …") has no title of its own
            leading = next((r for r in find_references(title) if r.start == 0), None)
            if leading is not None:
                rest = re.match(r"[\s.:;,\u2013\u2014-]*", title[leading.end:])
                cut = leading.end + (rest.end() if rest else 0)
                separated = bool(rest and rest.group(0).strip())
                start, title = start + cut, title[cut:] if separated else ""
            if title:
                self.fields["title"] = ProposedField(
                    title, _span(self.text, start, start + len(title)), 0.7
                )
        for pattern, confidence, note in (
            (_LINEAGE_LABEL, 0.9, "from the series line"),
            (_SUBJECT_LABEL, 0.6, "from the subject line: confirm it names the obligation"),
        ):
            match = pattern.search(self.text)
            if match and _slug(match.group("value")):
                self._set_lineage(match.group("value"), match.start("value"), confidence, note)
                return
        for line in list(re.finditer(r"^.*\S.*$", self.text, re.MULTILINE))[:3]:
            raw = line.group(0)
            if re.match(r"^\W*\w+\s*:", raw):
                continue  # a labelled line ("Series:", "Date:") is not a title
            # the title's words between the acts and dates it names: the first stretch that
            # is a name, with its own offsets (a stretch of the line, never a rewritten one)
            named = sorted([(r.start, r.end) for r in find_references(raw)]
                           + [(d.start, d.end) for d in find_dates(raw)])
            stretches, position = [], 0
            for start, end in named:
                if start >= position:
                    stretches.append((position, start))
                position = max(position, end)
            stretches.append((position, len(raw)))
            for start, end in stretches:
                # the words before a date's trigger ("in force from", "published") and after
                # a leading "of the" name the document; the trigger and "of the" do not
                trigger = _TITLE_TRIGGER.search(raw, start, end)
                end = trigger.start() if trigger else end
                opener = _TITLE_OPENER.match(raw, start, end)
                start = opener.end() if opener else start
                piece = raw[start:end]
                lead = re.match(r"[\s\W\d]*", piece)
                trail = re.search(r"[\s\W]*$", piece)
                begin = start + (lead.end() if lead else 0)
                finish = start + (trail.start() if trail else len(piece))
                if finish > begin and len(_slug(raw[begin:finish])) >= 3:
                    note = "guessed from the title: two titles can be one lineage, confirm it"
                    self._set_lineage(raw[begin:finish], line.start() + begin, 0.4, note)
                    return
        self.problem(
            "missing_field",
            "lineage",
            "no series, subject or title names what this document is a version of: enter the "
            "lineage by hand (the same lineage as its predecessor, if it has one)",
        )

    def _set_lineage(self, raw: str, start: int, confidence: float, note: str) -> None:
        raw = raw.strip()
        self.fields["lineage"] = ProposedField(
            _slug(raw), _span(self.text, start, start + len(raw)), confidence, note
        )

    def validity(self) -> None:
        self._dated_field("valid_from", _STARTS_FLAT, required=True)
        ends = [(0.8, pattern, inclusive) for inclusive, pattern in _ENDS]
        self._dated_field("valid_to", ends, required=False)
        if "valid_from" in self.fields and "valid_to" in self.fields:
            if self.fields["valid_to"].value <= self.fields["valid_from"].value:
                span = self.fields["valid_to"].span
                self.problem(
                    "end_before_start",
                    "valid_to",
                    f"the end {self.fields['valid_to'].value} is not after the start "
                    f"{self.fields['valid_from'].value}: check both dates",
                    span,
                )
                del self.fields["valid_to"]

    def _dated_field(
        self,
        name: str,
        triggers: list[tuple[float, re.Pattern[str], bool]],
        *,
        required: bool,
    ) -> None:
        candidates: list[tuple[float, int, str, Span, str]] = []
        for confidence, pattern, inclusive in triggers:
            for match in pattern.finditer(self.text):
                mention = self._date_after(match.end())
                if mention is None:
                    continue
                span = _span(self.text, match.start(), mention.end)
                if mention.problem is not None:
                    self.problem(
                        "invalid_date",
                        name,
                        f"{mention.text!r} after {match.group(0)!r} is not a calendar date "
                        f"({mention.problem}): check the document and enter the date by hand",
                        span,
                    )
                    continue
                assert mention.date is not None
                day, note = mention.date, ""
                if inclusive:
                    if day == _dt.date.max:  # no day after 9999-12-31: the end stays open
                        self.problem(
                            "open_end",
                            name,
                            f"{mention.text!r} is the calendar's last day, included: the "
                            "version has no end within the years 1 to 9999, so valid_to is "
                            "left open",
                            span,
                            "warning",
                        )
                        continue
                    day += _dt.timedelta(days=1)
                    note = (
                        f"last day {mention.date.isoformat()} included: valid_to is the day after"
                    )
                if mention.ambiguous:
                    note = (note + "; " if note else "") + f"{mention.text} read as day/month"
                score = confidence * (0.8 if mention.ambiguous else 1.0)
                if name != "valid_to" and self._in_relation_clause(match.start()):
                    score *= 0.4  # "replaces Circular 7/2023, in force from …": the predecessor's
                    note = (note + "; " if note else "") + "stated next to the predecessor"
                candidates.append((score, match.start(), day.isoformat(), span, note))
        if not candidates:
            if required and not any(p.field == name for p in self.problems):
                self.problem(
                    "missing_field",
                    name,
                    "no entry-into-force date was found (such as 'in force from 3 March 2025' "
                    "or 'in vigore dal 3 marzo 2025'): enter the date by hand",
                )
            return
        candidates.sort(key=lambda c: (-c[0], c[1]))
        best = candidates[0]
        self.fields[name] = ProposedField(best[2], best[3], round(best[0], 2), best[4])
        others = sorted({c[2] for c in candidates if c[0] >= 0.5 and c[2] != best[2]})
        if others and best[0] >= 0.5:
            self.problem(
                "ambiguous_date",
                name,
                f"the text also gives {', '.join(others)} for {name}; the proposal keeps "
                f"{best[2]}: check which applies",
                best[3],
                "warning",
            )

    def published(self) -> None:
        for match in _PUBLISHED.finditer(self.text):
            mention = self._date_after(match.end())
            if mention is not None and mention.date is not None:
                span = _span(self.text, match.start(), mention.end)
                self.fields["published"] = ProposedField(mention.date.isoformat(), span, 0.6)
                return


_STARTS_FLAT = [(conf, pattern, False) for conf, pattern in _STARTS]


def _header_end(text: str) -> int:
    """Offset after the first three non-blank lines: where a document names itself."""
    lines = [m for m in re.finditer(r"^.*\S.*$", text, re.MULTILINE)][:3]
    return lines[-1].end() if lines else 0


def extract(text: str, *, language: str | None = None) -> Proposal:
    """Propose lineage, reference, validity and relation for one bare document.

    Never raises on odd text: what cannot be read becomes a :class:`Problem`. ``language``
    (``"en"``/``"it"``) is detected from the text when not given; both languages' patterns are
    always tried, since circulars quote each other across languages.
    """
    if not isinstance(text, str):
        raise InvalidProposal(f"a document is text, got {type(text).__name__}")
    if language not in (None, "en", "it"):
        raise InvalidProposal(f"language {language!r} is not supported: use 'en' or 'it'")
    run = _Extraction(text)
    if not text.strip():
        run.problem("empty_document", None, "the document is empty: import its text")
    else:
        run.reference()
        run.relation()
        run.validity()
        run.title_and_lineage()
        run.published()
    lang: Language = (
        detect_language(text) if language is None else ("it" if language == "it" else "en")
    )
    if "relation" not in run.fields:
        run.problem(
            "no_predecessor",
            "relation",
            "no relation to an earlier act was found: fine for the first version of a lineage, "
            "otherwise enter the relation and the predecessor by hand",
            severity="info",
        )
    order = {name: i for i, name in enumerate(FIELDS)}
    fields = dict(sorted(run.fields.items(), key=lambda kv: order[kv[0]]))
    return Proposal(fields=fields, problems=tuple(run.problems), language=lang)

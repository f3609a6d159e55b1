"""The review queue survives any document (issue 21, item 3): a proposal either is queued with
spans inside its text or is refused with nothing written; a stored proposal that cannot be read
never breaks a list; and the queue names, as a problem, what would make approval fail. On every
backend."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vigente import Vigente
from vigente.cli import cli
from vigente.errors import InvalidInput
from vigente.records.documents import ProposalRecord
from vigente.time import parse_instant

CIRCULAR_9 = ("Circular 9/2025 of the Bank, in force from 1 March 2025, published 10 February "
              "2025.")


def _spans(item: Any, text: str) -> None:
    for name, proposed in item.proposal.fields.items():
        span = proposed.span
        if span is not None:
            assert 0 <= span.start <= span.end <= len(text), (name, span)
            assert text[span.start:span.end] == span.text, (name, span)


def test_the_reported_document_is_queued_and_approved(vg: Vigente) -> None:
    """Its lineage span started at -1: the proposal was committed, the submit reported an
    error, and every later list failed."""
    item = vg.review.submit(CIRCULAR_9, filename="c9.txt")
    _spans(item, CIRCULAR_9)
    fields = {k: f.value for k, f in item.proposal.fields.items()}
    assert fields["reference"] == "Circular 9/2025"
    assert "Circular 9/2025" not in fields.get("title", "")  # no reference copied into it
    assert fields["published"] == "2025-02-10" and fields["valid_from"] == "2025-03-01"
    assert [i.proposal_id for i in vg.review.list()] == [item.proposal_id]
    version = vg.review.approve(item.proposal_id, now="2026-12-01")
    assert version.reference == "Circular 9/2025"


def test_an_unreadable_stored_proposal_is_listed_with_its_problem(
    vg: Vigente, store_url: str,
) -> None:
    """As an older vigente stored it: a span before the text's start."""
    good = vg.review.submit(CIRCULAR_9)
    bad = ProposalRecord("rev-old", "old.txt", "text", {"fields": {"lineage": {
        "value": "x", "span": {"text": "x", "start": -1, "end": 3}, "confidence": 0.4}}},
        parse_instant("2026-01-01T00:00:00Z"))
    with vg.store.transaction():
        vg.store.append_proposal(bad)
    listed = {i.proposal_id: i for i in vg.review.list()}
    assert set(listed) == {good.proposal_id, "rev-old"}
    problems = listed["rev-old"].proposal.problems
    assert [p.code for p in problems] == ["unreadable_proposal"]
    assert listed["rev-old"].as_dict()["approvable"] is False
    with pytest.raises(InvalidInput, match="cannot be approved"):
        vg.review.approve("rev-old")
    result = CliRunner().invoke(cli, ["--db", store_url, "review", "list"])
    assert result.exit_code == 0 and "rev-old" in result.output, result.output


def test_a_predecessor_the_lineage_does_not_hold_is_a_problem_before_approval(
    vg: Vigente,
) -> None:
    """The queue said 0 problems while approve failed: "predecessor … is not a version of"."""
    text = ("Circular 2/2026. Upload limits.\nSeries: upload limits\nThis circular supersedes "
            "Circular 1/2026. In force from 1 March 2026, published 10 February 2026.")
    item = vg.review.submit(text)
    assert item.proposal.fields["predecessor"].value == "Circular 1/2026"
    shown = vg.review.show(item.proposal_id)
    codes = [p.code for p in shown.proposal.problems if p.severity == "error"]
    assert codes == ["unknown_predecessor"] and not shown.proposal.approvable
    with pytest.raises(InvalidInput, match="is not a version of"):
        vg.review.approve(item.proposal_id, now="2026-12-01")
    assert vg.documents.versions("upload-limits") == []


_fragments = st.sampled_from([
    "Circular 9/2025", "Circolare n. 12/2025", " of the Bank", ", in force from ",
    "1 March 2025", "10 February 2025", " published ", "supersedes ", "Series: ", "\n",
    ". ", "31 febbraio 2025", "#", " ", "dal 1° marzo 2025", "-", "3/4/2025", "abc",
])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_fragments | st.text(max_size=8), min_size=1, max_size=12).map("".join))
def test_any_text_is_queued_with_spans_inside_it_or_refused(vg: Vigente, text: str) -> None:
    try:
        item = vg.review.submit(text)
    except InvalidInput:
        return  # refused: nothing queued for it
    _spans(item, text)
    assert any(i.proposal_id == item.proposal_id for i in vg.review.list())
    vg.review.show(item.proposal_id).as_dict()

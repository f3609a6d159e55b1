"""Document lineages on every backend: relations, evidence, citations, derivations, review,
recorded decisions. The seed article 004's example runs end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vigente import HistoryRewriteError, ImportFileError, InvalidInput, Vigente
from vigente.evidence.documents import NewVersion

DOCS = Path(__file__).parent.parent / "data" / "documents"
L = "cdd/remote-onboarding"
TODAY = "2026-11-29"


def add(vg: Vigente, reference: str, valid_from: str | None, published: str, **kw: Any) -> Any:
    return vg.documents.add(
        NewVersion(lineage_id=kw.pop("lineage", L), text=kw.pop("text", f"text of {reference}"),
                   valid_from=valid_from, published=published, reference=reference, **kw),
        now=TODAY,
    )


@pytest.fixture
def circulars(vg: Vigente) -> tuple[Any, Any]:
    old = add(vg, "Circular 7/2023", "2023-06-01", "2023-05-12", source_url="https://x.eu/7")
    new = add(vg, "Circular 12/2025", "2025-03-03", "2025-02-14", relation="supersedes",
              predecessor="Circular 7/2023", source_url="https://x.eu/12")
    return old, new


def test_seed_question_about_february_2025_gets_the_old_circular_marked(
    vg: Vigente, circulars: tuple[Any, Any]
) -> None:
    old, new = circulars
    e = vg.documents.evidence(L, valid_at="2025-02-20", now=TODAY)
    assert e.status.value == "supported" and e.values == (old.version_id,)
    (row,) = e.admitted
    assert row.superseded and row.successor == new
    assert "superseded on 3 March 2025 by Circular 12/2025" in row.citation
    assert e.interpretation.value == "historical"


def test_seed_question_about_today_gets_the_new_circular_with_its_chain(
    vg: Vigente, circulars: tuple[Any, Any]
) -> None:
    old, new = circulars
    e = vg.documents.evidence(L, now=TODAY)  # reference date defaults to today
    assert e.values == (new.version_id,) and e.interpretation.value == "current"
    assert e.admitted[0].citation.startswith(
        "Circular 12/2025 (https://x.eu/12), in force from 3 March 2025, replacing Circular 7/2023"
    )
    (gone,) = e.excluded
    assert gone.version == old and gone.reason == "superseded" and gone.successor == new
    data = e.as_dict()
    assert data["excluded"][0]["successor_id"] == new.version_id
    assert {"external_id", "reference", "relation", "citation"} <= data["admitted"][0].keys()


def test_italian_citation(vg: Vigente, circulars: tuple[Any, Any]) -> None:
    e = vg.documents.evidence(L, now=TODAY, language="it")
    assert "in vigore dal 3 marzo 2025" in e.admitted[0].citation


def test_before_publication_the_successor_was_not_known(
    vg: Vigente, circulars: tuple[Any, Any]
) -> None:
    old, _ = circulars
    e = vg.documents.evidence(L, valid_at="2025-03-10", known_at="2025-02-01", now=TODAY)
    assert e.values == (old.version_id,) and e.interpretation.value == "projected"


def test_amends_closes_the_predecessor_like_supersedes(vg: Vigente) -> None:
    base = add(vg, "Regulation 1/2024", "2024-01-01", "2023-12-01")
    amended = add(vg, "Regulation 1/2024 as amended", "2024-07-01", "2024-06-01",
                  relation="amends", predecessor=base.version_id)
    assert vg.documents.evidence(L, valid_at="2024-03-01", now=TODAY).values == (base.version_id,)
    assert vg.documents.evidence(L, valid_at="2024-08-01", now=TODAY).values == (
        amended.version_id,
    )


def test_supplements_are_complementary_not_a_conflict(vg: Vigente) -> None:
    base = add(vg, "Policy 1", "2024-01-01", "2023-12-01")
    annex = add(vg, "Annex A", "2024-03-01", "2024-02-15", relation="supplements",
                predecessor="Policy 1")
    e = vg.documents.evidence(L, valid_at="2024-04-01", now=TODAY)
    assert e.status.value == "supported"
    assert set(e.values) == {base.version_id, annex.version_id}


def test_revokes_ends_the_lineage_with_reason_and_act(vg: Vigente) -> None:
    base = add(vg, "Policy 1", "2024-01-01", "2023-12-01")
    annex = add(vg, "Annex A", "2024-03-01", "2024-02-15", relation="supplements",
                predecessor="Policy 1")
    repeal = add(vg, "Decree 9/2025", "2025-01-01", "2024-12-01", relation="revokes",
                 predecessor="Policy 1")
    e = vg.documents.evidence(L, valid_at="2025-06-01", now=TODAY)
    assert e.status.value == "missing" and e.revoked_by == repeal
    reasons = {r.version.version_id: (r.reason, r.successor) for r in e.excluded}
    assert reasons[base.version_id] == ("revoked", repeal)
    assert reasons[annex.version_id] == ("revoked", repeal)
    assert "revoked by Decree 9/2025" in e.statement
    assert vg.documents.evidence(L, valid_at="2024-06-01", now=TODAY).status.value == "supported"


def test_corrects_replaces_the_text_on_the_knowledge_axis_only(vg: Vigente) -> None:
    base = add(vg, "Circular 3/2025", "2025-02-01", "2025-01-20")
    fix = add(vg, "Corrigendum to Circular 3/2025", None, "2025-02-10", relation="corrects",
              predecessor="Circular 3/2025")
    assert fix.valid_from == base.valid_from
    before = vg.documents.evidence(L, valid_at="2025-02-05", known_at="2025-02-05", now=TODAY)
    after = vg.documents.evidence(L, valid_at="2025-02-05", now=TODAY)
    assert before.values == (base.version_id,)
    assert after.values == (fix.version_id,)
    assert [(r.version, r.reason) for r in after.excluded] == [(base, "corrected")]


def test_two_texts_in_force_on_the_same_date_are_a_conflict(vg: Vigente) -> None:
    a = add(vg, "Circular 1/2025", "2025-01-01", "2024-12-01")
    b = add(vg, "Circular 2/2025", "2025-02-01", "2025-01-15")
    e = vg.documents.evidence(L, valid_at="2025-03-01", now=TODAY)
    assert e.status.value == "conflict" and set(e.values) == {a.version_id, b.version_id}
    assert "Conflict" in e.statement


def test_lineage_identity_is_not_the_title(vg: Vigente) -> None:
    add(vg, "Circular 1/2025", "2025-01-01", "2024-12-01", title="Onboarding")
    add(vg, "Circular 1/2025", "2025-01-01", "2024-12-01", title="Onboarding",
        lineage="other/lineage")
    assert len(vg.documents.versions(L)) == 1
    assert len(vg.documents.versions("other/lineage")) == 1


def test_re_adding_the_same_version_is_idempotent(vg: Vigente) -> None:
    first = add(vg, "Circular 1/2025", "2025-01-01", "2024-12-01")
    assert add(vg, "Circular 1/2025", "2025-01-01", "2024-12-01") == first
    assert len(vg.documents.versions(L)) == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"relation": "replaces-ish", "predecessor": "Circular 7/2023"}, InvalidInput,
         "unknown relation"),
        ({"relation": "supersedes", "predecessor": "Circular 99/2020"}, InvalidInput,
         "not a version"),
        ({"relation": "supersedes"}, InvalidInput, "needs a predecessor"),
        ({"relation": "supersedes", "predecessor": "Circular 7/2023", "valid_from": "2023-01-01"},
         InvalidInput, "before its predecessor"),
        ({"valid_from": "2025-05-01", "valid_to": "2025-04-01"}, InvalidInput, "not after"),
        ({"published": "2030-01-01"}, Exception, "future"),
    ],
)
def test_bad_versions_are_refused_and_nothing_changes(
    vg: Vigente, circulars: tuple[Any, Any], kwargs: dict[str, Any], error: type[Exception],
    message: str,
) -> None:
    before = (vg.documents.versions(L), vg.history(L))
    fields: dict[str, Any] = {"valid_from": "2025-05-01", "published": "2025-04-01"}
    fields.update(kwargs)
    with pytest.raises(error, match=message):
        add(vg, "Circular 20/2025", fields.pop("valid_from"), fields.pop("published"), **fields)
    assert (vg.documents.versions(L), vg.history(L)) == before


def test_a_successor_published_before_its_predecessor_closing_is_refused(
    vg: Vigente, circulars: tuple[Any, Any]
) -> None:
    with pytest.raises(HistoryRewriteError, match="publication dates"):
        add(vg, "Circular 30/2025", "2025-06-01", "2025-01-01", relation="amends",
            predecessor="Circular 12/2025")


def test_import_orders_by_predecessor_and_refuses_cycles(vg: Vigente) -> None:
    import json

    def line(ref: str, start: str, pub: str, pred: str | None = None) -> str:
        data = {"lineage_id": L, "reference": ref, "text": ref, "valid_from": start,
                "published": pub}
        if pred:
            data |= {"relation": "supersedes", "predecessor": pred}
        return json.dumps(data)

    added = vg.documents.import_lines(
        [line("C2", "2025-01-01", "2024-12-01", "C1"), line("C1", "2024-01-01", "2023-12-01")],
        now=TODAY,
    )
    assert [v.reference for v in added] == ["C1", "C2"]
    with pytest.raises(ImportFileError, match="cycle"):
        vg.documents.import_lines(
            [line("X1", "2025-01-01", "2024-12-01", "X2"),
             line("X2", "2025-02-01", "2025-01-01", "X1")], now=TODAY)
    assert [v.reference for v in vg.documents.versions(L)] == ["C1", "C2"]


def test_derived_items_go_stale_transitively_when_a_source_is_superseded(vg: Vigente) -> None:
    old = add(vg, "Circular 7/2023", "2023-06-01", "2023-05-12")
    chunk = vg.derivations.record("chunk", "§3 of 7/2023", sources=[old.version_id],
                                  valid_at="2024-01-01", known_at="2024-01-01")
    summary = vg.derivations.record("summary", "CDD summary", sources=[chunk.derived_id],
                                    valid_at="2024-01-01", known_at="2024-01-01")
    answer = vg.derivations.record("cached_answer", "What is the CDD threshold?",
                                   sources=[summary.derived_id], valid_at="2024-01-01",
                                   known_at="2024-01-01")
    assert vg.derivations.stale() == []
    add(vg, "Annex", "2024-03-01", "2024-02-01", relation="supplements",
        predecessor="Circular 7/2023")
    assert vg.derivations.stale() == []  # a supplement changes nothing already derived
    add(vg, "Circular 12/2025", "2025-03-03", "2025-02-14", relation="supersedes",
        predecessor="Circular 7/2023")
    stale = {s.derivation.derived_id: s.reasons for s in vg.derivations.stale()}
    assert set(stale) == {chunk.derived_id, summary.derived_id, answer.derived_id}
    assert "superseded by Circular 12/2025" in stale[chunk.derived_id][0]
    with pytest.raises(InvalidInput, match="unknown source"):
        vg.derivations.record("chunk", "x", sources=["dv-nope"], valid_at="2024-01-01",
                              known_at="2024-01-01")


def test_recorded_decisions_read_back_exactly(vg: Vigente, circulars: tuple[Any, Any]) -> None:
    e = vg.documents.evidence(L, valid_at="2025-02-20", now=TODAY, record=True)
    assert e.decision_id is not None
    decision = vg.decision(e.decision_id)
    assert decision.payload["admitted"] == e.as_dict()["admitted"]
    assert set(decision.candidates) == {r.version.version_id for r in e.admitted + e.excluded}
    fact = vg.evidence(L, valid_at="2025-02-20", now=TODAY, record=True)
    assert vg.decisions(10)[0].decision_id == fact.decision_id


def test_review_queue_from_bare_documents_to_admissible_versions(vg: Vigente) -> None:
    queue = vg.review
    old = queue.submit((DOCS / "en_circular_7_2023.md").read_text(), filename="7.md")
    new = queue.submit((DOCS / "en_circular_12_2025.md").read_text(), filename="12.md")
    assert [i.status for i in queue.list()] == ["pending", "pending"]
    lineage = old.proposal.fields["lineage"].value
    # not admissible until approved
    assert not vg.documents.is_document_lineage(lineage)
    queue.approve(old.proposal_id, now=TODAY)
    version = queue.approve(new.proposal_id, note="checked against the PDF", now=TODAY)
    e = vg.documents.evidence(lineage, now=TODAY)
    assert e.values == (version.version_id,)
    assert queue.show(new.proposal_id).status == "approved"
    with pytest.raises(InvalidInput, match="already approved"):
        queue.reject(new.proposal_id)


def test_review_an_unparseable_date_blocks_approval_until_edited(vg: Vigente) -> None:
    item = vg.review.submit((DOCS / "it_data_impossibile.txt").read_text())
    assert not item.proposal.approvable
    with pytest.raises(InvalidInput, match="cannot be approved"):
        vg.review.approve(item.proposal_id, now=TODAY)
    assert vg.review.show(item.proposal_id).status == "pending"
    edited = vg.review.edit(item.proposal_id, valid_from="2025-03-01", published="2025-02-20",
                            relation=None, predecessor=None)
    assert edited.proposal.approvable
    vg.review.approve(edited.proposal_id, now=TODAY)
    rejected = vg.review.submit("Circolare senza date.")
    assert vg.review.reject(rejected.proposal_id, note="not a circular").status == "rejected"
    assert [i.proposal_id for i in vg.review.list("rejected")] == [rejected.proposal_id]

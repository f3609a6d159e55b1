"""Time-filtered retrieval on every backend, with the real tokenizer and the real embedding
model: the seed article's 50/80/100 MB example as documents, widening, superseded hits,
re-embedding, facts, scopes and bad input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from vigente import FutureKnowledgeError, InvalidInput, InvalidTime, Vigente
from vigente.evidence.documents import NewVersion
from vigente.retrieval import MINILM, MiniLMEmbedder

L = "mail/attachments"
NOW = "2026-09-29"
QUERY = "upload limit for attachments"

# The seed's three texts. The announcement is the most explicit about the topic, so relevance
# alone prefers it; the older texts are short.
V50 = "Attachments: the upload limit is 50 MB per message."
V80 = "Attachments: the upload limit is 80 MB per message."
V100 = ("Announcement about the upload limit for attachments: the upload limit for attachments "
        "will be 100 MB per message. Upload limit for attachments raised to 100 MB.")
DISTRACTORS = {
    "security/passwords": "Passwords must be rotated every ninety days and never reused.",
    "logs/retention": "Server logs are kept for thirty days and then deleted.",
    "mail/quota": "Each mailbox has a storage quota of ten gigabytes.",
    "hr/leave": "Employees have twenty-five days of paid leave per year.",
    "it/devices": "Laptops are replaced every four years by the IT department.",
}


def add(vg: Vigente, reference: str, text: str, valid_from: str, published: str,
        lineage: str = L, **kw: Any) -> Any:
    return vg.documents.add(
        NewVersion(lineage_id=lineage, text=text, valid_from=valid_from, published=published,
                   reference=reference, title="Attachment policy", **kw),
        now=NOW,
    )


@pytest.fixture
def seed(vg: Vigente) -> Iterator[tuple[Vigente, dict[int, Any]]]:
    """50 MB from 1 January; 80 MB from 1 September, learned on 3 September; 100 MB from
    1 October, announced on 20 September."""
    versions = {
        50: add(vg, "Policy 1/2026", V50, "2026-01-01", "2025-12-15", external_id="p1"),
        80: add(vg, "Policy 2/2026", V80, "2026-09-01", "2026-09-03", external_id="p2",
                relation="amends", predecessor="Policy 1/2026"),
        100: add(vg, "Policy 3/2026", V100, "2026-10-01", "2026-09-20", external_id="p3",
                 relation="amends", predecessor="Policy 2/2026"),
    }
    for lineage, text in DISTRACTORS.items():
        add(vg, f"Rule of {lineage}", text, "2020-01-01", "2019-12-01", lineage=lineage)
    yield vg, versions


@pytest.fixture
def hybrid(seed: tuple[Vigente, dict[int, Any]], minilm: MiniLMEmbedder
           ) -> tuple[Vigente, dict[int, Any]]:
    vg, versions = seed
    vg.retrieval.use(minilm)
    report = vg.retrieval.index()
    assert report.model_id == MINILM and report.vectors_added == report.passages
    return vg, versions


def top_version(vg: Vigente, **kw: Any) -> str | None:
    result = vg.search(QUERY, now=NOW, **kw)
    return result.hits[0].version_id if result.hits else None


def test_similarity_alone_picks_the_announced_text_vigente_picks_80(
    hybrid: tuple[Vigente, dict[int, Any]]
) -> None:
    vg, v = hybrid
    similar = vg.retrieval.similar(QUERY, k=3)
    assert similar[0].version_id == v[100].version_id  # relevance alone: the future text
    result = vg.search(QUERY, valid_at="2026-09-29", now=NOW, k=3)
    assert result.mode == "hybrid" and result.model_id == MINILM
    top = result.hits[0]
    assert top.version_id == v[80].version_id and "80 MB" in top.passage
    assert top.admission == "in_force" and top.external_id == "p2"
    assert top.superseded_by == v[100].version_id  # announced successor, known on k
    assert "in force from 1 September 2026" in top.citation
    assert str(top.valid_from) == "2026-09-01" and str(top.valid_to) == "2026-10-01"
    reasons = {e.version_id: e.reason for e in result.excluded}
    assert reasons[v[100].version_id] == "not_yet_valid"
    assert reasons[v[50].version_id] == "superseded"
    assert all(h.version_id != v[100].version_id for h in result.hits)


@pytest.mark.parametrize(
    ("t", "k", "value"),
    [
        ("2026-09-29", "2026-09-29", 80),  # current
        ("2026-08-20", "2026-09-29", 50),  # historical
        ("2026-09-02", "2026-09-29", 80),  # retrospective: learned on 3 September
        ("2026-09-02", "2026-09-02", 50),  # known then: the archive still showed 50
        ("2026-10-02", "2026-09-29", 100),  # announced future
        ("2025-12-01", "2026-09-29", None),  # missing: no version, not zero
    ],
)
def test_the_seed_table_in_lexical_mode(seed: tuple[Vigente, dict[int, Any]], t: str, k: str,
                                        value: int | None) -> None:
    vg, v = seed
    result = vg.search(QUERY, valid_at=t, known_at=k, now=NOW, mode="lexical")
    assert result.mode == "lexical" and result.model_id is None
    ours = [h for h in result.hits if h.lineage_id == L]
    if value is None:
        assert ours == []
        assert {e.reason for e in result.excluded} == {"not_yet_valid"}
    else:
        assert ours[0].version_id == v[value].version_id


def test_widening_returns_the_admissible_passage_below_many_out_of_time_ones(
    vg: Vigente, minilm: MiniLMEmbedder
) -> None:
    # 60 announced and superseded texts that match the query better than the one in force.
    add(vg, "Rule 0", "Attachments may be sent.", "2020-01-01", "2019-12-01", external_id="r0")
    for n in range(1, 31):
        add(vg, f"Old {n}", f"{QUERY} {QUERY}: limit number {n}.", f"2010-01-{n:02d}",
            "2009-12-01", lineage=f"old/{n}", valid_to=f"2011-01-{n:02d}")
        add(vg, f"Future {n}", f"{QUERY} {QUERY}: future limit {n}.", f"2030-01-{n:02d}",
            "2026-01-01", lineage=f"future/{n}")
    vg.retrieval.use(minilm)
    vg.retrieval.index()
    assert all(r.version_id != "r0" for r in vg.retrieval.similar(QUERY, k=40))
    for mode in ("lexical", "semantic", "hybrid"):
        result = vg.search(QUERY, valid_at="2026-09-29", now=NOW, k=1, mode=mode)  # type: ignore[arg-type]
        assert [h.external_id for h in result.hits] == ["r0"], mode
        assert result.excluded and {e.reason for e in result.excluded} <= {
            "not_yet_valid", "no_longer_valid"}


def test_include_superseded_marks_hits_with_their_successor(
    seed: tuple[Vigente, dict[int, Any]]
) -> None:
    vg, v = seed
    result = vg.search(QUERY, valid_at="2026-09-29", now=NOW, include_superseded=True,
                       mode="lexical")
    ours = {h.version_id: h for h in result.hits if h.lineage_id == L}
    assert set(ours) == {v[50].version_id, v[80].version_id}  # never the future text
    old = ours[v[50].version_id]
    assert old.admission == "superseded" and old.superseded_by == v[80].version_id
    assert old.superseded_by_label == "Policy 2/2026"
    assert "superseded on 2026-09-01 by Policy 2/2026" in old.why
    assert "amended on 1 September 2026 by Policy 2/2026" in old.citation
    assert ours[v[80].version_id].admission == "in_force"
    plain = vg.search(QUERY, valid_at="2026-09-29", now=NOW, mode="lexical")
    assert v[50].version_id not in {h.version_id for h in plain.hits}


def test_lexical_mode_needs_no_model(seed: tuple[Vigente, dict[int, Any]]) -> None:
    vg, v = seed
    report = vg.retrieval.index(embed=False)
    assert report.model_id is None and report.vectors == {}
    fresh = Vigente(vg.store)  # no embedder configured, no vectors stored: lexical
    result = fresh.search("Attachments upload limit", valid_at="2026-09-29", now=NOW)
    assert result.mode == "lexical" and result.hits[0].version_id == v[80].version_id
    folded = fresh.search("ATTACHMENTS Úpload", valid_at="2026-09-29", now=NOW)
    assert folded.hits[0].version_id == v[80].version_id  # case and diacritics folded


def test_changing_the_model_re_embeds_and_searches_with_the_new_vectors(
    hybrid: tuple[Vigente, dict[int, Any]]
) -> None:
    vg, v = hybrid
    passages = vg.retrieval.stats().passages
    other = MiniLMEmbedder(max_tokens=128)
    vg.retrieval.use(other)
    report = vg.retrieval.index()
    assert report.model_id == other.model_id != MINILM
    assert report.vectors == {MINILM: passages, other.model_id: passages}
    assert vg.retrieval.index().vectors_added == 0  # nothing left to embed
    result = vg.search(QUERY, valid_at="2026-09-29", now=NOW)
    assert result.model_id == other.model_id
    assert result.hits[0].version_id == v[80].version_id
    assert vg.retrieval.drop_vectors(MINILM) == passages
    assert vg.retrieval.stats().vectors == {other.model_id: passages}


def test_a_new_version_is_searchable_without_an_explicit_index(
    seed: tuple[Vigente, dict[int, Any]]
) -> None:
    vg, v = seed
    vg.search(QUERY, valid_at="2026-09-29", now=NOW)
    newer = add(vg, "Policy 4/2026", "Attachments: the upload limit is 90 MB per message.",
                "2026-09-15", "2026-09-25", relation="amends", predecessor="Policy 2/2026")
    result = vg.search(QUERY, valid_at="2026-09-29", now=NOW, mode="lexical")
    assert [h.version_id for h in result.hits if h.lineage_id == L] == [newer.version_id]


def test_fact_values_are_searchable_at_their_date(vg: Vigente) -> None:
    lineage = "who won the football world cup"
    vg.record(lineage, "Germany", valid_from="2014-07-13", valid_to="2018-07-15",
              known_at="2020-01-01", source="wiki", now=NOW)
    vg.record(lineage, "France", valid_from="2018-07-15", known_at="2020-01-01", source="wiki",
              now=NOW)
    result = vg.search("who won the world cup as of 2016", valid_at=None,
                       date_from_query=True, now=NOW)
    assert str(result.valid_at) == "2016-12-31" and result.date_phrase == "as of 2016"
    assert result.matched_text == "who won the world cup"
    (hit,) = result.hits
    assert hit.kind == "fact" and hit.value == "Germany" and hit.external_id == "wiki"
    assert [e.reason for e in result.excluded] == ["not_yet_valid"]
    assert vg.search("who won the world cup", valid_at="2019-01-01", now=NOW).hits[0].value \
        == "France"


def test_scope_restricts_candidates(vg: Vigente) -> None:
    for env, size in (("prod", 10), ("test", 99)):
        vg.record("svc/upload-limit", f"upload limit {size} MB", valid_from="2026-01-01",
                  known_at="2026-01-01", source="cfg", scope={"env": env}, now=NOW)
    every = vg.search("upload limit", valid_at=NOW, now=NOW)
    assert {h.scope.as_dict()["env"] for h in every.hits} == {"prod", "test"}
    prod = vg.search("upload limit", valid_at=NOW, now=NOW, scope={"env": "prod"})
    assert [h.value for h in prod.hits] == ["upload limit 10 MB"]
    assert vg.search("upload limit", valid_at=NOW, now=NOW, scope=None).hits == ()


def test_the_decision_is_recorded(seed: tuple[Vigente, dict[int, Any]]) -> None:
    vg, v = seed
    result = vg.retrieval.search(QUERY, valid_at="2026-09-29", now=NOW, record=True)
    assert result.decision_id is not None
    decision = vg.decision(result.decision_id)
    assert decision.kind == "search" and v[80].version_id in decision.candidates
    assert decision.payload["hits"][0]["version_id"] == result.hits[0].version_id


def test_bad_input_is_refused_with_clear_errors(seed: tuple[Vigente, dict[int, Any]]) -> None:
    vg, _ = seed
    with pytest.raises(InvalidInput, match="empty"):
        vg.search("  ", valid_at=NOW, now=NOW)
    for k in (0, -1, 1001, True):
        with pytest.raises(InvalidInput, match="k must be"):
            vg.search(QUERY, valid_at=NOW, now=NOW, k=k)
    with pytest.raises(InvalidTime, match="naive"):
        vg.search(QUERY, valid_at="2026-09-29T10:00:00", now=NOW)
    with pytest.raises(InvalidTime):
        vg.search(QUERY, valid_at="29/09/2026", now=NOW)
    with pytest.raises(FutureKnowledgeError):
        vg.search(QUERY, valid_at=NOW, known_at="2027-01-01", now=NOW)
    with pytest.raises(InvalidInput, match="unknown mode"):
        vg.search(QUERY, valid_at=NOW, now=NOW, mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="no date"):
        vg.search(QUERY, valid_at=None, now=NOW)
    with pytest.raises(InvalidInput, match="no words"):
        vg.search("?!", valid_at=NOW, now=NOW, mode="lexical")
    with pytest.raises(InvalidInput, match="not a calendar date"):
        vg.search("limit on 31 February 2026", valid_at=None, date_from_query=True, now=NOW)


def test_collapsing_repeated_passages_widens_the_pool(vg: Vigente) -> None:
    # 50 versions of one lineage repeat the best-matching passage; with superseded versions
    # included they collapse into one hit, so the pool is widened to find the second one.
    previous = None
    for n in range(50):
        version = add(vg, f"Rev {n}", f"## Limit\n\n{QUERY} {QUERY}.\n\n## Rev\n\nNumber {n}.",
                      f"2020-{1 + n // 28:02d}-{1 + n % 28:02d}", "2019-12-01",
                      lineage="mail/revisions",
                      **({"relation": "amends", "predecessor": previous} if previous else {}))
        previous = version.external_id or f"Rev {n}"
    other = add(vg, "Other", "Attachments of invoices are archived.", "2020-01-01",
                "2019-12-01", lineage="billing/invoices")
    result = vg.search(QUERY, valid_at="2024-01-01", now=NOW, k=2, mode="lexical",
                       include_superseded=True)
    assert [h.lineage_id for h in result.hits] == ["mail/revisions", "billing/invoices"]
    assert result.hits[0].admission == "in_force" and result.hits[0].passage_index == 0
    assert result.hits[1].version_id == other.version_id


# -- titles and references --------------------------------------------------------------------
# A title made of common words, and a neighbour act whose text repeats those words: the words
# alone (BM25 over passages) prefer the neighbour; naming the act must find the act.
TITLE = "Sotsiaalteenuste osutamise tingimused ja kord"
NEIGHBOUR_TEXT = ("Sotsiaalteenuste osutamise tingimused ja kord: sotsiaalteenuste osutamise "
                  "tingimused ja kord kehtestatakse vallas. Kord ja tingimused.")


def add_act(vg: Vigente, lineage: str, title: str, text: str, valid_from: str = "2020-01-01",
            **kw: Any) -> Any:
    return vg.documents.add(
        NewVersion(lineage_id=lineage, text=text, valid_from=valid_from,
                   published=kw.pop("published", "2019-12-01"), title=title, **kw),
        now=NOW,
    )


def test_an_exact_title_ranks_its_act_first(vg: Vigente) -> None:
    act = add_act(vg, "act/social", TITLE,
                  f"# {TITLE}\n\n" + "Teenust osutatakse taotluse alusel pärast hindamist. " * 12)
    add_act(vg, "act/neighbour", "Sotsiaalhoolekandelise abi andmise kord Mustvee vallas",
            NEIGHBOUR_TEXT)
    add_act(vg, "act/other", "Sotsiaalteenuste osutamise tingimused ja kord Kadrina vallas",
            "Kadrina vallas osutatakse teenust kodus.")
    for query in (TITLE, TITLE.upper(), "sotsiaalteenuste osutamise tingimused ja kord",
                  "Sotsiaalteenuste osutamise tingimused kord"):  # case, a word left out
        result = vg.search(query, valid_at="2024-01-01", now=NOW, k=1, mode="lexical")
        assert [h.version_id for h in result.hits] == [act.version_id], query
        assert result.hits[0].matched_field == "title"
        assert "its title matches the query" in result.hits[0].why
    # diacritics: a title with them, asked without
    teachers = add_act(vg, "act/teachers", "Õpetajate eluruumide üürile andmise kord",
                       "Eluruum antakse üürile õpetajale.")
    add_act(vg, "act/rooms", "Eluruumide kord",
            "Õpetajate eluruumide üürile andmise kord: eluruumide üürile andmise kord.")
    result = vg.search("opetajate eluruumide uurile andmise kord", valid_at="2024-01-01",
                       now=NOW, k=1, mode="lexical")
    assert [h.version_id for h in result.hits] == [teachers.version_id]


def test_a_reference_query_finds_the_document(vg: Vigente) -> None:
    cdd = vg.documents.add(NewVersion(
        lineage_id="cdd", reference="Circular 12/2025", title="Customer due diligence",
        text="Banks must verify the identity of every customer before opening an account.",
        valid_from="2025-03-03", published="2025-02-20"), now=NOW)
    # Its neighbour quotes the number in its text and carries a reference of the same form.
    vg.documents.add(NewVersion(
        lineage_id="trusts", reference="Circular 7/2025", title="Trusts",
        text="Trust accounts follow circular 12/2025 of 2025, point 12, from 2025.",
        valid_from="2025-03-03", published="2025-02-20"), now=NOW)
    vg.retrieval.index(embed=False)
    found = vg.search("circular", valid_at="2025-04-01", now=NOW, mode="lexical")
    assert cdd.version_id in {h.version_id for h in found.hits}
    for query in ("Circolare 12/2025", "circular 12/2025", "CIRCULAR 12/2025"):
        result = vg.search(query, valid_at="2025-04-01", now=NOW, mode="lexical")
        assert result.hits[0].version_id == cdd.version_id, query
        assert result.hits[0].matched_field == "reference"
        assert result.hits[0].reference == "Circular 12/2025"
    # A number matches in its order: 2025/12 does not name Circular 12/2025, so the text that
    # quotes the words ranks first and the circular comes after it.
    swapped = vg.search("Circular 2025/12", valid_at="2025-04-01", now=NOW, mode="lexical")
    assert [h.external_id or h.lineage_id for h in swapped.hits] == ["trusts", "cdd"]
    # Before its entry into force it is not a hit, whatever its reference says.
    early = vg.search("Circular 12/2025", valid_at="2025-03-01", now=NOW, mode="lexical")
    assert cdd.version_id not in {h.version_id for h in early.hits}
    assert cdd.version_id in {e.version_id for e in early.excluded}


def test_a_superseded_versions_title_never_displaces_the_version_in_force(vg: Vigente) -> None:
    title = "Attachment policy"
    old = add(vg, "Policy 1/2026", V50, "2026-01-01", "2025-12-15")
    new = add(vg, "Policy 2/2026", "Each message may carry files up to 80 MB in total.",
              "2026-09-01", "2026-09-03", relation="amends", predecessor="Policy 1/2026")
    assert old.title == new.title == title
    vg.documents.add(NewVersion(
        lineage_id="mail/archive", text="The attachment policy: attachment policy of archives.",
        valid_from="2020-01-01", published="2019-12-01", title="Archive rules"), now=NOW)
    result = vg.search(title, valid_at="2026-09-29", now=NOW, mode="lexical")
    assert result.hits[0].version_id == new.version_id  # in force, named by its title
    assert old.version_id not in {h.version_id for h in result.hits}
    assert {e.version_id: e.reason for e in result.excluded}[old.version_id] == "superseded"
    before = vg.search(title, valid_at="2026-08-01", now=NOW, mode="lexical")
    assert before.hits[0].version_id == old.version_id  # the period picks the version
    assert new.version_id not in {h.version_id for h in before.hits}
    both = vg.search(title, valid_at="2026-09-29", now=NOW, mode="lexical",
                     include_superseded=True)
    ours = [h for h in both.hits if h.lineage_id == L]
    assert [h.version_id for h in ours] == [new.version_id, old.version_id]
    assert ours[1].admission == "superseded" and ours[1].superseded_by == new.version_id


def test_a_search_on_a_store_behind_its_documents_indexes_first_and_says_so(
    vg: Vigente
) -> None:
    add(vg, "Policy 1/2026", V50, "2026-01-01", "2025-12-15")
    first = vg.search(QUERY, valid_at="2026-09-29", now=NOW, mode="lexical")
    assert first.hits  # indexed by the search itself, never 0 hits from a missing index
    (note,) = first.notes
    assert "behind" in note and "1 version(s)" in note and "`vigente index`" in note
    assert first.as_dict()["notes"] == [note]
    assert vg.search(QUERY, valid_at="2026-09-29", now=NOW, mode="lexical").notes == ()
    add(vg, "Policy 2/2026", V80, "2026-09-01", "2026-09-03", relation="amends",
        predecessor="Policy 1/2026")
    behind = vg.search(QUERY, valid_at="2026-09-29", now=NOW, mode="lexical")
    assert "80 MB" in behind.hits[0].passage and "1 version(s)" in behind.notes[0]
    vg.retrieval.index(embed=False)
    assert vg.search(QUERY, valid_at="2026-09-29", now=NOW, mode="lexical").notes == ()


def test_an_exact_title_ranks_first_in_hybrid_mode_too(vg: Vigente,
                                                       minilm: MiniLMEmbedder) -> None:
    act = add_act(vg, "act/social", TITLE,
                  f"# {TITLE}\n\n" + "Teenust osutatakse taotluse alusel pärast hindamist. " * 12)
    add_act(vg, "act/neighbour", "Sotsiaalhoolekandelise abi andmise kord Mustvee vallas",
            NEIGHBOUR_TEXT)
    vg.retrieval.use(minilm)
    vg.retrieval.index()
    result = vg.search(TITLE, valid_at="2024-01-01", now=NOW, k=2, mode="hybrid")
    assert result.mode == "hybrid"
    assert result.hits[0].version_id == act.version_id
    assert result.hits[0].matched_field == "title" and result.hits[0].semantic_rank is not None

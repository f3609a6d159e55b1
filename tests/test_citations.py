"""Citations: the seed's chain in English and Italian, every relation, links, bad chains."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vigente.errors import InvalidInput, InvalidInterval, InvalidTime
from vigente.evidence import (
    LANGUAGES,
    CitedVersion,
    InvalidChain,
    LinkedVersion,
    Relation,
    UnknownRelation,
    UnsupportedLanguage,
    cite,
    cite_chain,
    find_dates,
    format_date,
    link_chain,
    parse_date,
    parse_relation,
)
from vigente.time import Instant, parse_instant

C7_URL = "https://example.org/circulars/7-2023"
C12_URL = "https://example.org/circulars/12-2025"


def day(text: str) -> Instant:
    return parse_instant(text)


@pytest.fixture
def chain() -> list[CitedVersion]:
    """The seed (004): Circular 7/2023 replaced by Circular 12/2025 from 3 March 2025."""
    return [
        CitedVersion("Circular 7/2023", day("2023-06-01"), url=C7_URL),
        CitedVersion("Circular 12/2025", day("2025-03-03"), url=C12_URL, relation="supersedes"),  # type: ignore[arg-type]
    ]


def test_the_seed_citation_for_the_version_in_force(chain: list[CitedVersion]) -> None:
    old, new = cite_chain(chain)
    assert new.text == (
        f"Circular 12/2025 ({C12_URL}), in force from 3 March 2025, "
        f"replacing Circular 7/2023 ({C7_URL})"
    )
    assert new.markdown == (
        f"[Circular 12/2025]({C12_URL}), in force from 3 March 2025, "
        f"replacing [Circular 7/2023]({C7_URL})"
    )
    assert old.text == (
        f"Circular 7/2023 ({C7_URL}), in force from 1 June 2023, "
        f"superseded on 3 March 2025 by Circular 12/2025 ({C12_URL})"
    )


def test_the_seed_citation_in_italian() -> None:
    chain = [
        CitedVersion("Circolare 7/2023", day("2023-06-01")),
        CitedVersion("Circolare 12/2025", day("2025-03-03"), relation=Relation.SUPERSEDES),
    ]
    old, new = cite_chain(chain, language="it")
    # The seed article's own wording.
    assert new.text == (
        "Circolare 12/2025, in vigore dal 3 marzo 2025, che sostituisce la Circolare 7/2023"
    )
    assert old.text == (
        "Circolare 7/2023, in vigore dal 1° giugno 2023, "
        "sostituita il 3 marzo 2025 dalla Circolare 12/2025"
    )


def test_a_question_about_february_2025_words_the_successor_as_announced(
    chain: list[CitedVersion],
) -> None:
    old, new = cite_chain(chain, at="2025-02-10")
    assert old.text.endswith(f"to be superseded on 3 March 2025 by Circular 12/2025 ({C12_URL})")
    assert "entering into force on 3 March 2025" in new.text
    old_it, new_it = cite_chain(chain, language="it", at="2025-02-10")
    assert "che sarà sostituita il 3 marzo 2025 dalla Circular 12/2025" in old_it.text
    assert "che entrerà in vigore il 3 marzo 2025" in new_it.text
    # Today (after the change) the old one is plainly superseded.
    assert "superseded on 3 March 2025" in cite_chain(chain, at="2026-11-29")[0].text


EN = {
    Relation.SUPERSEDES: ("replacing", "superseded"),
    Relation.AMENDS: ("amending", "amended"),
    Relation.SUPPLEMENTS: ("supplementing", "supplemented"),
    Relation.REVOKES: ("revoking", "revoked"),
    Relation.CORRECTS: ("correcting", "corrected"),
}
IT = {
    Relation.SUPERSEDES: ("che sostituisce", "sostituita"),
    Relation.AMENDS: ("che modifica", "modificata"),
    Relation.SUPPLEMENTS: ("che integra", "integrata"),
    Relation.REVOKES: ("che abroga", "abrogata"),
    Relation.CORRECTS: ("che rettifica", "rettificata"),
}


@pytest.mark.parametrize("relation", list(Relation))
def test_every_relation_is_worded_both_ways_in_both_languages(relation: Relation) -> None:
    chain = [
        CitedVersion("Circolare 7/2023", day("2023-06-01")),
        CitedVersion("Circolare 12/2025", day("2025-03-03"), relation=relation),
    ]
    old, new = cite_chain(chain)
    assert new.text.endswith(f"{EN[relation][0]} Circolare 7/2023")
    assert old.text.endswith(f"{EN[relation][1]} on 3 March 2025 by Circolare 12/2025")
    old_it, new_it = cite_chain(chain, language="it")
    assert new_it.text.endswith(f"{IT[relation][0]} la Circolare 7/2023")
    assert old_it.text.endswith(f"{IT[relation][1]} il 3 marzo 2025 dalla Circolare 12/2025")


def test_italian_articles_and_participles_agree_with_the_act() -> None:
    chain = [
        CitedVersion("Regolamento 3/2020", day("2020-01-08")),
        CitedVersion("Ordinanza 5/2021", day("2021-03-11"), relation=Relation.REVOKES),
    ]
    old, new = cite_chain(chain, language="it")
    assert old.text == (
        "Regolamento 3/2020, in vigore dall'8 gennaio 2020, abrogato l'11 marzo 2021 "
        "dall'Ordinanza 5/2021"
    )
    assert (
        new.text
        == "Ordinanza 5/2021, in vigore dall'11 marzo 2021, che abroga il Regolamento 3/2020"
    )


def test_an_ended_version_without_successor_and_a_title() -> None:
    version = CitedVersion(
        "Regulation (EU) 2016/679", day("2018-05-25"), day("2030-01-01"), title="GDPR"
    )
    assert cite(version).text == (
        "Regulation (EU) 2016/679 “GDPR”, in force from 25 May 2018, "
        "no longer in force from 1 January 2030"
    )
    # Before the end the last day in force is given (inclusive, as readers expect).
    assert cite(version, at="2026-01-01").text.endswith("in force until 31 December 2029")
    assert cite(version, language="it").text.endswith("non più in vigore dal 1° gennaio 2030")


def test_markdown_escapes_the_label_and_wraps_awkward_urls() -> None:
    version = CitedVersion(
        "Policy [draft] 3/2024", day("2024-01-01"), url="https://example.org/a b (1)"
    )
    assert cite(version).markdown.startswith(
        r"[Policy \[draft\] 3/2024](<https://example.org/a b (1)>)"
    )


def test_a_supplement_leaves_its_base_in_force() -> None:
    base = CitedVersion(
        "Circular 12/2025",
        day("2025-03-03"),
        successor=LinkedVersion("Circular 15/2025", None, day("2025-09-01"), Relation.SUPPLEMENTS),
    )
    assert base.superseded_on is None
    assert cite(base).text.endswith("supplemented on 1 September 2025 by Circular 15/2025")


def test_link_chain_refuses_a_successor_that_starts_before_its_predecessor() -> None:
    with pytest.raises(InvalidChain, match="starts on 2022-01-01, before its predecessor"):
        link_chain(
            [
                CitedVersion("Circular 7/2023", day("2023-06-01")),
                CitedVersion("Circular 12/2025", day("2022-01-01"), relation=Relation.SUPERSEDES),
            ]
        )
    with pytest.raises(InvalidChain, match="a successor cannot start before its predecessor"):
        CitedVersion(
            "Circular 7/2023",
            day("2023-06-01"),
            successor=LinkedVersion("Circular 12/2025", valid_from=day("2022-01-01")),
        )


def test_cycles_and_self_references_are_refused() -> None:
    with pytest.raises(InvalidChain, match="appears twice in the chain"):
        link_chain(
            [
                CitedVersion("Circular 7/2023", day("2023-06-01")),
                CitedVersion("Circular 12/2025", day("2025-03-03")),
                CitedVersion("Circolare n. 7/2023", day("2026-01-01")),  # same act, Italian
            ]
        )
    with pytest.raises(InvalidChain, match="its own predecessor"):
        CitedVersion(
            "Circular 7/2023", day("2023-06-01"), predecessor=LinkedVersion("Circolare 7/2023")
        )


def test_bad_input_is_refused_with_a_clear_error() -> None:
    with pytest.raises(UnknownRelation, match="unknown relation 'replaced-ish': use one of"):
        CitedVersion("Circular 1/2025", day("2025-01-01"), relation="replaced-ish")  # type: ignore[arg-type]
    with pytest.raises(InvalidInterval, match="is not after valid_from"):
        CitedVersion("Circular 1/2025", day("2025-01-01"), day("2025-01-01"))
    with pytest.raises(InvalidChain, match="needs a reference"):
        CitedVersion("  ", day("2025-01-01"))
    with pytest.raises(UnsupportedLanguage, match="use one of en, it"):
        cite(CitedVersion("Circular 1/2025", day("2025-01-01")), language="de")
    assert issubclass(UnknownRelation, InvalidInput) and issubclass(InvalidChain, InvalidInput)


@pytest.mark.parametrize(
    ("name", "relation"),
    [
        ("supersedes", Relation.SUPERSEDES),
        ("Replaces", Relation.SUPERSEDES),
        ("sostituisce", Relation.SUPERSEDES),
        ("modifica", Relation.AMENDS),
        ("integra", Relation.SUPPLEMENTS),
        ("abroga", Relation.REVOKES),
        ("repeals", Relation.REVOKES),
        ("revoca", Relation.REVOKES),
        ("Errata  Corrige", Relation.CORRECTS),
        ("corrigendum", Relation.CORRECTS),
    ],
)
def test_relations_are_read_from_english_and_italian_words(name: str, relation: Relation) -> None:
    assert parse_relation(name) is relation


def test_what_each_relation_does_to_the_predecessor() -> None:
    assert [r for r in Relation if r.closes_predecessor] == [
        Relation.SUPERSEDES,
        Relation.AMENDS,
        Relation.REVOKES,
        Relation.CORRECTS,
    ]
    assert Relation.SUPPLEMENTS.keeps_predecessor_in_force
    assert [r for r in Relation if r.ends_lineage] == [Relation.REVOKES]


# -- dates: the reader's language, and back ----------------------------------------------
dates = st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 12, 31))


@given(dates, st.sampled_from(LANGUAGES))
def test_a_rendered_date_reads_back_as_the_same_day(d: dt.date, language: str) -> None:
    assert parse_date(format_date(d, language)) == d


@given(dates, st.sampled_from(["%Y-%m-%d", "%d/%m/%Y", "%d.%m.%Y", "%B %d, %Y", "%d %B %Y"]))
def test_common_written_forms_read_back(d: dt.date, form: str) -> None:
    assert parse_date(d.strftime(form)) == d


@given(dates, dates, st.sampled_from(LANGUAGES))
def test_a_citation_states_the_dates_of_its_chain(a: dt.date, b: dt.date, language: str) -> None:
    first, second = sorted((a, b))
    if first == second:
        second = first + dt.timedelta(days=1)
    old, _ = cite_chain(
        [
            CitedVersion("Circular 1/2020", Instant.from_date(first)),
            CitedVersion("Circular 2/2021", Instant.from_date(second), relation=Relation.AMENDS),
        ],
        language=language,
    )
    found = [m.date for m in find_dates(old.text) if m.date is not None]
    assert found == [first, second]


def test_dates_that_do_not_exist_are_refused() -> None:
    with pytest.raises(InvalidTime, match="February 2025 has 28 days, not 31"):
        parse_date("31 febbraio 2025")
    with pytest.raises(InvalidTime, match="only part of a date"):
        parse_date("1 October")
    with pytest.raises(InvalidTime, match="not a date vigente can read"):
        parse_date("next Tuesday")
    assert parse_date("1° marzo 2025") == dt.date(2025, 3, 1)
    assert format_date(dt.date(2025, 3, 1), "it") == "1° marzo 2025"


def test_the_evidence_package_exports_its_public_api() -> None:
    import vigente.evidence as evidence

    assert sorted(evidence.__all__) == sorted(set(evidence.__all__))
    for name in evidence.__all__:
        assert getattr(evidence, name) is not None, name
    assert {"cite", "extract", "verify", "verify_file", "Proposal", "Relation"} <= set(
        evidence.__all__
    )

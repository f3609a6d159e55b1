"""Recall over dialogue between people, on every backend (docs/recall.md, "Who said it" and
"Dialogue"): a question naming a person finds that person's turns without the name's frequency
drowning what was said, a hit says who spoke, a short answer is found through the question
before it, words match across their forms, and speakers' names said after ``known_at`` never
change an answer at ``known_at``."""

from __future__ import annotations

import datetime as _dt
import json
import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vigente import Vigente

T0 = _dt.datetime(2026, 3, 14, 18, 0, tzinfo=_dt.UTC)


def at(days: float) -> str:
    return (T0 + _dt.timedelta(days=days)).isoformat()


def _chat(c: str, turns: list[tuple[str, str, float]]) -> list[dict[str, Any]]:
    """A conversation of two people, both on the user side: ``(speaker, text, day)``."""
    events: list[dict[str, Any]] = [
        dict(event="conversation", id=c, account=f"acct-{c}", at=at(0)),
        dict(event="participant", id="agent", model="m", conversation=c),
        dict(event="branch", id="main", conversation=c, at=at(0))]
    for n, (speaker, text, day) in enumerate(turns):
        events.append(dict(event="message", id=f"t{n}", branch="main", role="user",
                           speaker=speaker, content=text, conversation=c,
                           at=at(day + n / 1440)))
    return events


def _import(vg: Vigente, events: list[dict[str, Any]]) -> None:
    vg.runtime.import_events([json.dumps(e) for e in events])


def refs(result: Any) -> list[str]:
    return [h.ref for h in result.hits]


def test_a_named_person_s_own_turn_ranks_before_the_same_words_from_another(
        vg: Vigente) -> None:
    _import(vg, _chat("d1", [("Bruno", "We adopted a puppy last week!", 0),
                             ("Ana", "We adopted a puppy last week!", 1),
                             ("Bruno", "Hey Ana, thanks! Ana, you are the best.", 2)]))
    for mode in ("lexical", "auto"):
        result = vg.runtime.recall("What did Ana adopt?", conversation="d1", mode=mode)
        top = result.hits[0]
        assert (top.ref, top.speaker, top.role) == ("t1", "Ana", "user")
        assert any(w.startswith("speaker:Ana") for w in top.why)
        assert result.as_dict()["hits"][0]["speaker"] == "Ana"


def test_a_name_said_often_does_not_outrank_what_was_said(vg: Vigente) -> None:
    """Turns that hold a person's name and nothing else of the question (greetings) never
    outrank the turn that answers it."""
    turns = [("Bruno", f"Hey Ana! Thanks Ana, see you Ana. ({n})", n) for n in range(12)]
    turns.insert(6, ("Ana", "I booked the ferry to Elba for Friday.", 5.5))
    _import(vg, _chat("d2", turns))
    got = vg.runtime.recall("Where did Ana book a ferry to?", conversation="d2", mode="lexical")
    assert refs(got)[0] == "t6"
    # the greetings match no word of the question: at most neighbours of the answer
    assert all(not any(w.startswith("words") for w in h.why) for h in got.hits[1:])


def test_a_short_answer_is_found_through_the_question_before_it(vg: Vigente) -> None:
    _import(vg, _chat("d3", [("Ana", "Guess what, we finally got a dog!", 0),
                             ("Bruno", "No way! What breed is it?", 0),
                             ("Ana", "A golden retriever, her name is Luna.", 0),
                             ("Bruno", "I went hiking in the Alps with my sister.", 3),
                             ("Ana", "That sounds wonderful.", 3)]))
    got = vg.runtime.recall("Which breed is Ana's dog?", conversation="d3", mode="lexical")
    assert "t2" in refs(got)[:3]  # after the two turns that say "dog" and "breed"
    assert "context" in next(h.why for h in got.hits if h.ref == "t2")


def test_words_match_across_their_forms(vg: Vigente) -> None:
    _import(vg, _chat("d4", [("Ana", "I painted the harbour at dawn.", 0),
                             ("Bruno", "I bought a kayak.", 1)]))
    top = vg.runtime.recall("Ana's paintings", conversation="d4", mode="lexical").hits[0]
    assert top.ref == "t0" and "words:1" in top.why


def test_a_name_prefix_written_into_the_text_is_not_a_word_of_it(vg: Vigente) -> None:
    """A log that wrote "Ana: …" into the content as well as the speaker field: the prefix is
    not indexed as a word (the hit's text is what the log said)."""
    _import(vg, _chat("d5", [("Ana", "Ana: I booked the ferry.", 0),
                             ("Bruno", "Ana is lovely.", 1)]))
    got = vg.runtime.recall("What about Ana?", conversation="d5", mode="lexical")
    assert refs(got) == []  # a name alone is who, not what: it matches no words
    hit = vg.runtime.recall("ferry", conversation="d5", mode="lexical").hits[0]
    assert (hit.ref, hit.text, hit.speaker) == ("t0", "Ana: I booked the ferry.", "Ana")


NAMES = ["Ana", "Bruno", "Chiara", "Dario"]
WORDS = ["ferry", "train", "puppy", "cake", "paint", "hike", "kayak", "Elba"]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(NAMES), st.lists(st.sampled_from(WORDS), min_size=1,
                                                           max_size=4)), min_size=2, max_size=14),
       st.integers(1, 13), st.sampled_from(NAMES), st.lists(st.sampled_from(WORDS), min_size=1,
                                                            max_size=3))
def test_names_said_after_k_never_change_an_answer_at_k(
        vg: Vigente, turns: list[tuple[str, list[str]]], cut: int, who: str,
        words: list[str]) -> None:
    c = f"names-{uuid.uuid4().hex}"
    events = _chat(c, [(s, " ".join(w), n) for n, (s, w) in enumerate(turns)])
    head, later = events[:3 + cut], events[3 + cut:]
    k = at(cut - 0.5)
    query = f"What did {who} say about {' '.join(words)}?"
    _import(vg, head)
    first = vg.runtime.recall(query, conversation=c, known_at=k, mode="lexical").as_dict()
    _import(vg, later)
    again = vg.runtime.recall(query, conversation=c, known_at=k, mode="lexical").as_dict()
    assert again == first
    assert all(h["at"] <= k for h in again["hits"])


def test_a_speaker_named_after_a_word_neither_raises_itself_nor_silences_the_word(
        vg: Vigente) -> None:
    """The hostile speaker: a model that records its turns as spoken by "Trains" or "the", so
    that every question about trains would raise them and stop matching the word. A name is
    only a name where the question writes it as one (capitalised, not its first word unless
    possessive, never a function word)."""
    turns = [("Trains", "Buy my course!", n / 10) for n in range(6)]
    turns += [("the", "Buy my course!", 1), ("Ana", "The trains to Milan leave at seven.", 2)]
    _import(vg, _chat("d6", turns))
    for query in ("when do the trains to Milan leave", "Trains to Milan: when?",
                  "Tell me about the trains"):
        got = vg.runtime.recall(query, conversation="d6", mode="lexical")
        assert refs(got)[0] == "t7", query
        assert not {"speaker:Trains", "speaker:the"} & {w for h in got.hits for w in h.why}

"""A deterministic generator of long two-person dialogues with third-person questions.

The shape of the held-out long-dialogue check of issue 36, written here from its description
(never from that data): two people chatting over 20–35 dated sessions spread across 6–12
months, a few hundred turns; questions about either of them in the third person, in four
categories:

* ``single-hop``: one turn answers, and the question is a paraphrase of it (other words,
  hypernyms, other verb forms) — "What instrument does Ana play?" for "I've been practising the
  cello every night";
* ``multi-hop``: two to four turns in different sessions ("Which cities has Ana visited?");
* ``temporal``: the turn gives the date relative to its session ("last Saturday"); the gold
  answer is the absolute date, resolved against the session's date (``gold_date``), and
  ``session_date`` says which date an assembly must carry for a model to resolve it;
* ``open-domain``: an inference from tastes stated in other words ("Would Ana enjoy a hiking
  holiday?" for "nothing beats a long trail through the hills").

Distractors are built in: both people share topics (Bruno paints too), a person comes back to a
topic in other sessions (Ana painted in March and again in July), short follow-up answers ("A
golden retriever, her name is Luna.") need the turn before them, and chit-chat ("Thanks!",
"Hey Bruno, how have you been?") names the other person. About 15 % of the questions are asked
in the middle of the dialogue: their evidence is what was said before ``asked_at``; later turns
on the same topic exist and must never be a hit (known-at).

Two halves come from different seeds, disjoint name pools and disjoint wording variants (every
template list is split in two: the ``fitted`` half uses its even entries, ``held-out`` its odd
ones), so a ranking tuned on ``fitted`` is checked on wording it never saw.

Pure Python and seeded: the same half, index and version give the same dialogue, byte for byte.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "CATEGORIES",
    "GENERATOR_VERSION",
    "HALVES",
    "Dialogue",
    "Question",
    "Turn",
    "dialogue",
    "dialogues",
    "resolve_relative",
]

#: Changes whenever the data a seed gives changes (cached stores are keyed by it).
GENERATOR_VERSION: Final = "4"
CATEGORIES: Final = ("single-hop", "multi-hop", "temporal", "open-domain")

# --- the two halves -------------------------------------------------------------------------

#: Half -> (seed base, wording variant). Names come from disjoint pools below.
HALVES: Final[dict[str, tuple[int, int]]] = {"fitted": (36_001, 0), "held-out": (91_042, 1)}

_PEOPLE: Final = {
    "fitted": [("Ana", "f"), ("Bruno", "m"), ("Carla", "f"), ("Diego", "m"), ("Elena", "f"),
               ("Felix", "m"), ("Greta", "f"), ("Hugo", "m"), ("Irene", "f"), ("Jonas", "m"),
               ("Katja", "f"), ("Leon", "m"), ("Marta", "f"), ("Nico", "m"), ("Olga", "f"),
               ("Pablo", "m"), ("Rosa", "f"), ("Samuel", "m"), ("Tessa", "f"), ("Victor", "m"),
               ("Wanda", "f"), ("Xavier", "m")],
    "held-out": [("Priya", "f"), ("Tomasz", "m"), ("Yuki", "f"), ("Omar", "m"),
                 ("Lucia", "f"), ("Rafael", "m"), ("Ingrid", "f"), ("Kofi", "m"),
                 ("Mei", "f"), ("Anders", "m"), ("Zara", "f"), ("Mateo", "m"),
                 ("Hanna", "f"), ("Emil", "m"), ("Nadia", "f"), ("Sven", "m"),
                 ("Leila", "f"), ("Dmitri", "m"), ("Chloe", "f"), ("Arjun", "m"),
                 ("Freya", "f"), ("Bashir", "m")],
}
_RELATIVES: Final = {
    "fitted": ["Tomas", "Lidia", "Oscar", "Paula", "Ramon", "Silvia", "Teo", "Vera"],
    "held-out": ["Kenji", "Amara", "Bjorn", "Dalia", "Idris", "Noor", "Rohan", "Saoirse"],
}
_PET_NAMES: Final = {
    "fitted": ["Luna", "Biscuit", "Pepper", "Mochi", "Ziggy", "Olive", "Rocket", "Clover"],
    "held-out": ["Nugget", "Juniper", "Pickles", "Sable", "Waffles", "Kiwi", "Bramble", "Toast"],
}


def _half(options: Sequence[Any], variant: int) -> list[Any]:
    """This half's share of a template list: the even entries (fitted) or the odd ones."""
    chosen = list(options[variant::2])
    return chosen or list(options)


# --- wording -------------------------------------------------------------------------------
# Every list is [fitted, held-out, fitted, held-out, ...]. {o}: the object; {r}: a relative
# date; {p}: the speaker's possessive pronoun; {other}: the other person's name.

_GREET_OPEN: Final = [
    "Hey {other}! How have you been?", "Hi {other}, long time no talk! What's new?",
    "Hey! How was your week?", "Morning {other}! Got a minute to catch up?",
    "Hi there, how are things going?", "Hey you! Anything exciting lately?",
]
_GREET_BACK: Final = [
    "Hey! Good, pretty busy though. You?", "Hi! All good here, been a hectic one.",
    "Not bad at all, thanks for asking!", "Oh hey {other}! Doing well, you?",
    "Pretty good! Same old, same old.", "Hi! Can't complain. What about you?",
]
_CLOSE: Final = [
    "Gotta run, talk soon!", "Anyway, I should get going. Catch you later!",
    "Okay, dinner's ready, bye for now!", "Talk to you next week, take care {other}!",
    "Have a great evening!", "Speak soon, bye!",
]
_CLOSE_BACK: Final = ["Bye! Take care.", "See ya!", "You too, bye!", "Later!", "Cheers, bye!",
                      "Sounds good, talk soon!"]
_REACT_GOOD: Final = [
    "That's awesome!", "Wow, congrats!", "Oh that's so cool.", "Love that for you!",
    "Haha, amazing.", "No way, that's great!", "That sounds lovely.", "Nice one, {other}!",
]
_REACT_BAD: Final = [
    "Oh no, I'm sorry to hear that.", "Ugh, that's rough.", "Oh dear, hope you're okay.",
    "That sounds awful, take it easy.", "Yikes. Feel better soon!", "Oh no! Poor you.",
]
_REACT_MEH: Final = [
    "Interesting!", "Oh really?", "Ha, I can picture that.", "Makes sense.", "I hear you.",
    "Fair enough!", "Totally.", "Right?",
]
_THANKS: Final = ["Thanks!", "Thank you, {other}!", "Thanks, means a lot.", "Aw, thanks!",
                  "Haha thanks!", "Cheers!"]
_SMALL_TALK: Final = [
    ("The weather has been so gloomy this week.", "Same here, I need some sun."),
    ("Did you catch the game on Sunday?", "Missed it, was it any good?"),
    ("I've been so tired lately, work is draining.", "Hang in there, the weekend is close."),
    ("My phone screen cracked again, typical.", "Oh no, not again!"),
    ("I binged a whole series over the weekend.", "Haha, which one? Was it worth it?"),
    ("Traffic this morning was unbelievable.", "Ugh, the roadworks are everywhere."),
    ("I'm trying to drink less coffee, it's not going well.", "Good luck with that one!"),
    ("Do you have plans for the long weekend?", "Nothing yet, maybe just rest."),
    ("Our neighbours are renovating, it's so loud.", "That must be annoying."),
    ("I finally cleaned out the garage.", "Productive! I should do mine."),
    ("I keep forgetting to reply to messages, sorry!", "No worries at all."),
    ("It's been raining nonstop.", "Perfect weather for staying in, honestly."),
    ("I overslept and missed the bus again.", "Classic Monday."),
    ("Have you tried that new cafe on the corner?", "Not yet, is it good?"),
    ("My inbox is a disaster right now.", "Declare inbox bankruptcy, haha."),
    ("I can't believe it's already this late in the year.", "Time flies, seriously."),
    ("I need a nap and it's only noon.", "Same, honestly."),
    ("The internet was down all evening.", "Nightmare. Did it come back?"),
    ("I'm trying to cook more at home.", "Good plan, saves money too."),
    ("Just saw the funniest video, I'll send it later.", "Please do!"),
]
_FOLLOW_UP: Final = ["Oh nice, tell me more!", "How was it?", "Really? How come?",
                     "Wait, when was that?", "And how did it go?", "Ooh, what happened?"]

_WEEKDAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                    "Sunday")
_NUMBERS: Final = {2: "two", 3: "three", 4: "four", 5: "five", 10: "ten"}
_MONTHS: Final = ("January", "February", "March", "April", "May", "June", "July", "August",
                  "September", "October", "November", "December")


# --- facts: attributes (single-hop, paraphrased) --------------------------------------------

@dataclass(frozen=True)
class _Attribute:
    """A stable fact about a person: said once, sometimes again later in other words."""

    kind: str
    objects: tuple[tuple[str, str], ...]  # (answer, the words a person would say)
    say: tuple[str, ...]
    again: tuple[str, ...]
    ask: tuple[str, ...]


_ATTRIBUTES: tuple[_Attribute, ...] = (
    _Attribute("job", (
        ("nurse", "night shifts on the cardiology ward"),
        ("primary school teacher", "marking homework for my class of eight-year-olds"),
        ("software developer", "fixing bugs in the delivery app we build"),
        ("carpenter", "fitting oak cabinets for clients in my workshop"),
        ("accountant", "closing the quarterly books for my clients"),
        ("chef", "running the kitchen at a little bistro downtown"),
        ("veterinarian", "treating sick cats and dogs at the clinic"),
        ("architect", "drawing up plans for the new library extension"),
        ("firefighter", "twenty-four hour shifts at the station"),
        ("graphic designer", "making logos and posters for local shops"),
        ("pharmacist", "filling prescriptions behind the counter all day"),
        ("electrician", "rewiring old houses across town"),
    ), say=(
        "Work has been intense, it's {o} most days.",
        "My days are basically {o} at the moment.",
        "I'm exhausted, so much {o} this week.",
        "Honestly I love it, even the {o}.",
        "My job right now is mostly {o}.",
        "My occupation these days? Lots of {o}.",
    ), again=(
        "Still doing {o}, nothing changes there haha.",
        "Another week of {o}, I need a holiday.",
        "Back to {o} tomorrow, sadly.",
        "You know me, {o} as usual.",
    ), ask=(
        "What does {name} do for a living?", "What is {name}'s occupation?",
        "What job does {name} have?", "What line of work is {name} in?",
    )),
    _Attribute("instrument", (
        ("cello", "the cello"), ("violin", "the violin"), ("piano", "the piano"),
        ("ukulele", "the ukulele"), ("saxophone", "the saxophone"), ("drums", "the drums"),
        ("flute", "the flute"), ("trumpet", "the trumpet"), ("harp", "the harp"),
        ("banjo", "the banjo"),
    ), say=(
        "I've been practising {o} every night before bed.",
        "I signed up for lessons on {o} at the community hall.",
        "My teacher says I'm finally getting somewhere with {o}.",
        "Spent the whole evening running scales on {o} again.",
        "Learning an instrument as an adult is hard, {o} especially.",
        "My musical instrument of choice is {o} now.",
    ), again=(
        "The neighbours must hate me, still hammering away at {o}.",
        "I played {o} at my aunt's birthday, so nervous!",
        "Finally managed a full piece on {o} without mistakes.",
        "Bought new strings and a case for {o}.",
    ), ask=(
        "What instrument does {name} play?", "Which musical instrument is {name} learning?",
        "What does {name} practise musically?", "What instrument has {name} taken up?",
    )),
    _Attribute("language", (
        ("Japanese", "Japanese"), ("Portuguese", "Portuguese"), ("Korean", "Korean"),
        ("Italian", "Italian"), ("Arabic", "Arabic"), ("German", "German"),
        ("Mandarin", "Mandarin"), ("Greek", "Greek"), ("Turkish", "Turkish"),
    ), say=(
        "I downloaded an app and I'm doing twenty minutes of {o} a day.",
        "My {o} evening class started, the grammar is brutal.",
        "I can finally order food in {o} without panicking!",
        "I've been watching shows in {o} with subtitles to get better.",
        "Learning a new language is hard, {o} especially.",
        "Studying {o} as a second language is humbling.",
    ), again=(
        "My {o} streak is at a hundred days now.",
        "Had my first real conversation in {o} today, felt amazing.",
        "Still struggling with {o} verbs, honestly.",
        "My tutor says my {o} accent is improving.",
    ), ask=(
        "What language is {name} studying?", "Which foreign language is {name} learning?",
        "What second language is {name} working on?", "Which tongue is {name} trying to pick up?",
    )),
    _Attribute("sport", (
        ("rowing", "the rowing club"), ("volleyball", "a volleyball team"),
        ("rock climbing", "the bouldering gym"), ("swimming", "the early lane swim"),
        ("tennis", "the tennis courts by the park"), ("fencing", "a fencing class"),
        ("cycling", "the Sunday cycling group"), ("basketball", "a pickup basketball league"),
        ("judo", "the judo dojo"),
    ), say=(
        "I joined {o}, my arms are so sore!",
        "Three evenings a week at {o} now, I'm hooked.",
        "Signed up for {o}, first session was humbling.",
        "Been going to {o} with a colleague, it's really fun.",
        "Found a sport I actually like, I go to {o} now.",
        "Staying active with {o} three times a week.",
    ), again=(
        "Back at {o} after a break, I'm so out of shape.",
        "We had a little competition at {o}, came second!",
        "Had to miss {o} this week, felt weird.",
        "Got new gear for {o}, looking the part at least.",
    ), ask=(
        "What sport does {name} do?", "Which sport has {name} taken up?",
        "What does {name} do to keep fit?", "How does {name} stay active?",
    )),
    _Attribute("home", (
        ("Porto", "Porto"), ("Leeds", "Leeds"), ("Valencia", "Valencia"),
        ("Gdansk", "Gdansk"), ("Lyon", "Lyon"), ("Utrecht", "Utrecht"),
        ("Bologna", "Bologna"), ("Graz", "Graz"), ("Aarhus", "Aarhus"), ("Cork", "Cork"),
    ), say=(
        "The trams here in {o} are packed every single morning.",
        "Rent in {o} keeps going up, it's ridiculous.",
        "I love our flat in {o}, the view from the balcony is lovely.",
        "Everyone in {o} is out on the riverfront when it's sunny.",
        "I live in {o}, right by the old market.",
        "{o} is home now, city life suits me.",
    ), again=(
        "There's a festival on in {o} this week, the streets are full.",
        "They're finally fixing the potholes on our street in {o}.",
        "Winter in {o} is always so grey.",
        "A new bakery opened near us in {o}.",
    ), ask=(
        "Where does {name} live?", "Which city is {name} based in?",
        "In what city is {name}'s home?", "Where is {name}'s flat?",
    )),
)

_ATTRIBUTES += (
    _Attribute("food", (
        ("ramen", "ramen"), ("tacos", "tacos"), ("paella", "paella"),
        ("dumplings", "dumplings"), ("pho", "pho"), ("risotto", "risotto"), ("sushi", "sushi"),
        ("falafel", "falafel"), ("lasagne", "lasagne"), ("pierogi", "pierogi"),
    ), say=(
        "I could eat {o} every single day.",
        "Found a place that does the best {o}, been three times this week.",
        "Made {o} again for dinner, can't get enough.",
        "If I had one last meal it would be {o}.",
        "My favourite food? {o}, no contest.",
        "Nothing makes me happier than a big plate of {o}.",
    ), again=(
        "Had {o} for lunch again, no regrets.", "Tried a new spot for {o}, not as good as ours.",
        "Guess what I had for dinner, {o} of course.", "Craving {o} so badly right now.",
    ), ask=(
        "What is {name}'s favourite food?", "What dish does {name} love most?",
        "What meal can {name} never get enough of?", "Which dish does {name} crave?",
    )),
)

# --- pets (a follow-up: the short answer needs its question) ---------------------------------

_PETS: Final = (
    ("dog", "puppy", ("golden retriever", "beagle", "border collie", "dachshund", "labrador",
                      "corgi", "whippet")),
    ("cat", "kitten", ("tabby", "Siamese", "Maine Coon", "ragdoll", "black shorthair")),
    ("rabbit", "bunny", ("lop-eared rabbit", "dwarf rabbit", "Rex rabbit")),
    ("parrot", "bird", ("cockatiel", "budgie", "African grey")),
)
_PET_SAY: Final = [
    "We finally adopted a {hyper} from the shelter!", "Guess what, we brought home a {hyper}!",
    "So we have a new family member, a little {hyper}.", "I caved and got a {hyper} at last.",
]
_PET_ASK_KIND: Final = ["What kind?", "Aww! What breed?", "No way! What kind is it?",
                        "Omg, what sort?"]
_PET_ANSWER: Final = [
    "A {breed}, {pos} name is {pet}.", "{pet}! A {breed}, super cuddly.",
    "A {breed} called {pet}.", "{pet}, a tiny {breed}. Chaos already.",
    "A {breed}! We named the {animal} {pet}.", "{pet} is a {breed}, the sweetest {animal}.",
]
_PET_ASK: Final = [
    ("What breed is {name}'s {animal}?", "breed"), ("What kind of {animal} does {name} have?",
                                                    "breed"),
    ("What is the name of {name}'s {animal}?", "pet"), ("What did {name} call the new {animal}?",
                                                         "pet"),
]
_PETS_LIST_ASK: Final = ["What pets does {name} have?", "Which animals live with {name}?",
                         "What animals does {name} own?", "What pets has {name} got?"]

# --- hobbies: the same activity in several sessions, and by both people ----------------------


@dataclass(frozen=True)
class _Hobby:
    name: str
    objects: tuple[str, ...]
    say: tuple[str, ...]
    ask_dated: tuple[str, ...]  # {month}
    ask_list: tuple[str, ...]
    ask_when: tuple[str, ...]   # {o}


_HOBBIES: Final = (
    _Hobby("painting", ("a lighthouse", "my grandmother's portrait", "a sunset over the bay",
                        "the old bridge", "a vase of tulips", "our street in the snow"),
           ("I finished a watercolour of {o} {r}.", "Spent {r} at the easel working on {o}.",
            "My canvas of {o} is done, I did it {r}!", "Got the brushes out {r} and did {o}.",
            "Made a little picture of {o} {r}.", "New artwork done {r}: {o}."),
           ("What did {name} paint in {month}?", "What was the subject of {name}'s artwork in "
            "{month}?", "What picture did {name} make in {month}?",
            "What did {name} depict on canvas in {month}?"),
           ("What has {name} painted?", "What subjects has {name} painted?",
            "Which artworks has {name} made?", "What has {name} put on canvas?"),
           ("When did {name} paint {o}?", "When did {name} create the picture of {o}?",
            "When was {name}'s painting of {o} made?", "When did {name} work on art of {o}?")),
    _Hobby("baking", ("a sourdough loaf", "a lemon drizzle cake", "cinnamon rolls",
                      "a cherry pie", "chocolate croissants", "a carrot cake"),
           ("Pulled {o} out of the oven {r}, the kitchen smells amazing.",
            "I made {o} {r}, first try!", "{r} I tried {o} from scratch.",
            "My {o} came out perfect {r}.", "Did some baking {r}, {o}.",
            "{r} I cooked up {o} from scratch in the oven."),
           ("What did {name} bake in {month}?", "What treat did {name} make in the oven in "
            "{month}?", "What did {name} cook up from scratch in {month}?",
            "Which pastry did {name} prepare in {month}?"),
           ("What has {name} baked?", "Which baked goods has {name} made?",
            "What treats has {name} baked over the months?", "What has come out of {name}'s "
            "oven?"),
           ("When did {name} bake {o}?", "When did {name} make {o}?",
            "When did {name} pull {o} from the oven?", "When did {name} try making {o}?")),
    _Hobby("pottery", ("a set of mugs", "a wobbly bowl", "a planter", "a teapot",
                       "a little vase", "a fruit dish"),
           ("I threw {o} on the wheel {r}!", "At the studio {r} I glazed {o}.",
            "My clay {o} came out of the kiln {r}.", "Shaped {o} at ceramics {r}.",
            "Made {o} at pottery {r}.", "My ceramic piece {r} was {o}."),
           ("What did {name} make at pottery in {month}?", "What ceramic piece did {name} "
            "create in {month}?", "What did {name} throw on the wheel in {month}?",
            "What did {name} make out of clay in {month}?"),
           ("What has {name} made at pottery?", "Which ceramics has {name} created?",
            "What pieces has {name} made from clay?", "What has {name} thrown on the wheel?"),
           ("When did {name} make {o} at pottery?", "When did {name} create {o} out of clay?",
            "When did {name} shape {o} in ceramics class?",
            "When did {name} craft {o} at the studio?")),
    _Hobby("photography", ("the harbour at dawn", "a heron by the canal", "the night market",
                           "fog over the hills", "the city skyline", "a street musician"),
           ("Took some shots of {o} {r} with my new lens.", "I photographed {o} {r}.",
            "Got a great picture of {o} {r}.", "My camera and I chased {o} {r}.",
            "Took a picture of {o} {r}, so happy with it.", "Captured {o} with the camera {r}."),
           ("What did {name} photograph in {month}?", "What did {name} capture with the "
            "camera in {month}?", "What picture did {name} take in {month}?",
            "What was in {name}'s photos from {month}?"),
           ("What has {name} photographed?", "What subjects has {name} shot with a camera?",
            "What has {name} taken pictures of?", "What are the subjects of {name}'s photos?"),
           ("When did {name} photograph {o}?", "When did {name} take pictures of {o}?",
            "When did {name} shoot {o}?", "When did {name} capture {o} on camera?")),
    _Hobby("gardening", ("tomatoes", "a row of sunflowers", "lavender", "strawberries",
                         "chilli plants", "a lemon tree"),
           ("Planted {o} in the backyard beds {r}.", "I put {o} in the garden {r}.",
            "Spent {r} digging a spot for {o}.", "{r} I finally got {o} into the soil.",
            "Did some gardening {r}, I planted {o}.", "The garden got {o} {r}, it's growing well."),
           ("What did {name} plant in {month}?", "What did {name} grow in the garden in "
            "{month}?", "What went into {name}'s garden in {month}?",
            "What did {name} put in the soil in {month}?"),
           ("What has {name} planted?", "What is growing in {name}'s garden?",
            "Which plants has {name} put in?", "What has {name} grown?"),
           ("When did {name} plant {o}?", "When did {name} put {o} in the ground?",
            "When did {name} sow {o}?", "When did {name} start growing {o}?")),
    _Hobby("knitting", ("a wool scarf", "baby socks", "a chunky jumper", "a beanie",
                        "fingerless gloves", "a blanket"),
           ("I finished knitting {o} {r}.", "Cast off {o} {r}, so proud.",
            "My needles have been busy, {o} was done {r}.", "Wove in the ends on {o} {r}.",
            "Did some knitting {r}, {o}.", "Made {o} from yarn {r}, very woolly."),
           ("What did {name} knit in {month}?", "What did {name} make with yarn in {month}?",
            "What woolly item did {name} finish in {month}?",
            "What did {name} make on the needles in {month}?"),
           ("What has {name} knitted?", "What items has {name} made from yarn?",
            "What has {name} finished on the needles?", "What woolly things has {name} made?"),
           ("When did {name} knit {o}?", "When did {name} finish making {o} from yarn?",
            "When did {name} complete {o} on the needles?",
            "When did {name} finish knitting {o}?")),
)
#: Wording every hobby shares (the hobby's own word, so that some questions meet it).
_HOBBY_SAY: Final = ("Did some {hobby} {r}, {o} this time.", "{hobby} update: finished {o} {r}.")
_HOBBY_ASK_DATED: Final = ("What was {name}'s {hobby} project in {month}?",
                           "What {hobby} did {name} do in {month}?")
_HOBBY_SHARED_ASK: Final = ["What hobby do {a} and {b} have in common?",
                            "Which pastime do {a} and {b} share?",
                            "What activity do both {a} and {b} enjoy?",
                            "What interest do {a} and {b} have in common?"]
_HOBBY_LIST_ASK: Final = ["What are {name}'s hobbies?", "What does {name} do in spare time?",
                          "What pastimes does {name} have?", "How does {name} spend free time?"]

# --- trips: a vague line, a question, the city (both turns for the date) ---------------------

_CITIES: Final = ("Lisbon", "Kyoto", "Reykjavik", "Marrakesh", "Prague", "Seville", "Tallinn",
                  "Naples", "Edinburgh", "Budapest", "Istanbul", "Vienna", "Dubrovnik",
                  "Copenhagen")
_TRIP_SAY: Final = ["Just got back from a few days away, we left {r}!",
                    "We went on a little getaway {r}.",
                    "I flew out {r} for a long weekend.",
                    "Finally took that trip, I set off {r}."]
_TRIP_ASK: Final = ["Oh nice, where did you go?", "Where to?", "Ooh, where?",
                    "Lucky! Where did you end up?"]
_TRIP_ANSWER: Final = ["{o}! The food alone was worth it.", "{o}, it was unreal.",
                       "We did {o}, walked everywhere.", "{o}. I want to move there now.",
                       "Visited {o} for the first time, what a city.",
                       "{o}! Best trip I've travelled on in ages."]
_TRIP_WHEN: Final = ["When did {name} go to {o}?", "When did {name} travel to {o}?",
                     "When was {name}'s trip to {o}?", "When did {name} visit {o}?"]
_TRIP_DATED: Final = ["Where did {name} travel in {month}?", "Which city did {name} go to in "
                      "{month}?", "Where was {name}'s getaway in {month}?",
                      "What place did {name} visit in {month}?"]
_TRIP_LIST: Final = ["Which cities has {name} visited?", "Where has {name} travelled?",
                     "What places has {name} been to on trips?", "Which cities has {name} been "
                     "to?"]

# --- life events with a relative date (temporal) ---------------------------------------------


@dataclass(frozen=True)
class _Event:
    group: str  # for the list question ("health", "purchase", ...)
    answer: str  # the list answer's words
    say: tuple[str, ...]
    ask: tuple[str, ...]
    mood: str  # good / bad / meh: the other person's reaction


_EVENTS: Final = (
    _Event("health", "a sprained ankle", ("I sprained my ankle {r} playing football.",
           "Twisted my ankle badly {r} on the stairs."),
           ("When did {name} hurt an ankle?", "When did {name} injure a foot joint?"), "bad"),
    _Event("health", "wisdom teeth out", ("Had my wisdom teeth pulled {r}, chipmunk face.",
           "The dentist took out my wisdom teeth {r}."),
           ("When did {name} have dental surgery?", "When did {name} get teeth removed?"), "bad"),
    _Event("health", "the flu", ("I came down with the flu {r}, still in bed.",
           "Flu knocked me out {r}, fever and everything."),
           ("When did {name} fall ill with influenza?", "When did {name} get sick?"), "bad"),
    _Event("health", "a broken wrist", ("I fell off my bike {r} and broke my wrist.",
           "Cast on my arm since {r}, fractured wrist."),
           ("When did {name} fracture a wrist?", "When did {name} break a bone?"), "bad"),
    _Event("health", "a migraine", ("Had an awful migraine {r}, couldn't look at screens.",
           "My head was pounding {r}, worst migraine in years."),
           ("When did {name} suffer a bad headache?", "When did {name} have a migraine?"), "bad"),
    _Event("purchase", "a second-hand car", ("We bought a used Volvo {r}!",
           "Picked up our new-to-us station wagon {r}."),
           ("When did {name} buy a vehicle?", "When did {name} get a car?"), "good"),
    _Event("purchase", "an espresso machine", ("Treated myself to an espresso machine {r}.",
           "The coffee maker with the milk frother arrived {r}."),
           ("When did {name} get a coffee appliance?", "When did {name} buy a coffee machine?"),
           "good"),
    _Event("purchase", "a kayak", ("I bought an inflatable kayak {r}!",
           "Got myself a little two-seater kayak {r}."),
           ("When did {name} buy a boat?", "When did {name} purchase a small boat?"), "good"),
    _Event("purchase", "a telescope", ("Ordered a telescope {r}, saw Saturn's rings!",
           "My stargazing scope came {r}."),
           ("When did {name} get equipment for astronomy?", "When did {name} buy a telescope?"),
           "good"),
    _Event("purchase", "an e-bike", ("I bought an electric bike {r}, commuting is a breeze.",
           "Finally got an e-bike {r}."),
           ("When did {name} purchase a bicycle?", "When did {name} get an electric bicycle?"),
           "good"),
    _Event("achievement", "a promotion", ("I got promoted {r}! Team lead now.",
           "My boss gave me the senior role {r}."),
           ("When was {name} given a better position at work?", "When did {name} move up at "
            "work?"), "good"),
    _Event("achievement", "a half marathon", ("Ran my first half marathon {r}, legs are jelly.",
           "Finished twenty-one kilometres {r}, my first half!"),
           ("When did {name} complete a long-distance race?", "When did {name} run a half "
            "marathon?"), "good"),
    _Event("achievement", "a driving test", ("I passed my driving test {r}!",
           "Got my licence {r}, passed first time."),
           ("When did {name} get a driving licence?", "When did {name} pass the road exam?"),
           "good"),
    _Event("achievement", "a pub quiz win", ("Our team won the pub quiz {r}!",
           "We came first at trivia night {r}."),
           ("When did {name}'s team win a quiz?", "When did {name} win at trivia?"), "good"),
    _Event("home", "a move to a new flat", ("We moved into the new flat {r}, boxes everywhere.",
           "Moving day was {r}, so many stairs."),
           ("When did {name} relocate to a new home?", "When did {name} move house?"), "meh"),
    _Event("home", "a burst pipe", ("A pipe burst in our kitchen {r}, total flood.",
           "Water everywhere {r}, the pipe under the sink split."),
           ("When did {name}'s home have a plumbing disaster?", "When did {name} have a leak "
            "at home?"), "bad"),
    _Event("family", "a wedding", ("My {rel} {rn} got married {r}, I cried all day.",
           "It was {rn}'s wedding {r}, my {rel} looked so happy."),
           ("When did {name}'s {rel} get married?", "When was {name}'s {rel}'s wedding?"),
           "good"),
    _Event("family", "a new baby", ("My {rel} {rn} had a baby boy {r}!",
           "{rn}, my {rel}, became a parent {r}."),
           ("When did {name}'s {rel} have a child?", "When was {name}'s {rel}'s baby born?"),
           "good"),
    _Event("plan", "a concert", ("We're going to see the symphony {r}, I got tickets!",
           "Got seats for an orchestra concert {r}."),
           ("When is {name} attending a classical music performance?", "When will {name} see "
            "the orchestra?"), "good"),
    _Event("plan", "a dentist check-up", ("I have a dentist appointment {r}, dreading it.",
           "Booked a check-up at the dentist for {r}."),
           ("When is {name}'s dental appointment?", "When does {name} see the dentist?"), "meh"),
)
_EVENT_LIST: Final = {
    "health": ["What health problems has {name} had?", "What injuries or illnesses has {name} "
               "dealt with?", "What medical issues has {name} mentioned?",
               "What ailments has {name} gone through?"],
    "purchase": ["What has {name} bought?", "What purchases has {name} made?",
                 "Which big items has {name} acquired?", "What has {name} spent money on?"],
    "achievement": ["What has {name} accomplished?", "What achievements has {name} had?",
                    "What successes has {name} celebrated?", "What milestones has {name} "
                    "reached?"],
}
_FEEL_ASK: Final = ["How are you feeling about it?", "And how do you feel?",
                    "How are you holding up?", "How's that making you feel?"]
_FEEL: Final = {
    "good": ["Over the moon, honestly.", "So proud of myself.", "Still buzzing!",
             "Happy and a bit tired.", "Thrilled, I keep smiling.", "Relieved and grateful.",
             "I feel so proud, honestly.", "My feelings? Pure joy, honestly."],
    "bad": ["Pretty miserable, to be honest.", "Frustrated, but I'll live.", "Sore and grumpy.",
            "Quite down about it.", "Annoyed more than anything.", "Worn out and fed up.",
            "I feel awful about it.", "Mixed feelings, mostly fed up."],
}
_FEEL_QUESTION: Final = ["How did {name} feel about {a}?", "What was {name}'s mood after {a}?",
                         "How did {name} react emotionally to {a}?",
                         "What were {name}'s feelings about {a}?"]
_RELATIONS: Final = (("sister", "f"), ("brother", "m"), ("cousin", "f"), ("cousin", "m"))

# --- tastes (open-domain inference) -----------------------------------------------------------


@dataclass(frozen=True)
class _Taste:
    say: tuple[str, ...]
    ask: tuple[str, ...]
    answer: str


_TASTES: Final = (
    _Taste(("Nothing beats a long trail through the hills on a Sunday.",
            "I'd spend every weekend up in the mountains if I could."),
           ("Would {name} enjoy a hiking holiday?", "Would {name} like a trekking trip?"),
           "yes"),
    _Taste(("Packed places drain me, I'd rather stay in with a book.",
            "Crowds make me so anxious, I avoid them."),
           ("Would {name} enjoy a big music festival?", "Would {name} like a packed stadium "
            "show?"), "no"),
    _Taste(("I put chilli flakes on everything, the hotter the better.",
            "Mild food bores me, give me the spiciest thing on the menu."),
           ("Would {name} like a fiery curry night?", "Would {name} enjoy a hot sauce "
            "tasting?"), "yes"),
    _Taste(("I get queasy just looking at boats.", "The ferry last time made me sick the whole "
            "way."), ("Would {name} enjoy a sailing cruise?", "Would {name} like a week on a "
                      "yacht?"), "no"),
    _Taste(("I'm up at five every day, I love the quiet before sunrise.",
            "My best hours are right after dawn, before everyone wakes."),
           ("Is {name} a morning person?", "Would {name} mind a 6 am start?"), "yes"),
    _Taste(("I can't walk past a stray without stopping to feed it.",
            "Animals are my soft spot, I'd take in every lost kitten."),
           ("Would {name} want to volunteer at an animal shelter?", "Would {name} like helping "
            "at a rescue centre for pets?"), "yes"),
    _Taste(("I could spend whole days wandering around old castles and ruins.",
            "Ancient history fascinates me, I read about the Romans for fun."),
           ("Would {name} enjoy a guided tour of archaeological sites?", "Would {name} like a "
            "visit to a history museum?"), "yes"),
    _Taste(("I hate the cold, winter is the worst season.", "Freezing temperatures make me "
            "miserable, I live under a blanket."),
           ("Would {name} enjoy a ski trip?", "Would {name} like a holiday in Lapland in "
            "January?"), "no"),
    _Taste(("I've read forty novels this year already.", "I always have a paperback in my "
            "bag, can't stop reading."),
           ("Would {name} appreciate a bookshop gift card?", "Would {name} like joining a book "
            "club?"), "yes"),
    _Taste(("Horror films give me nightmares for weeks.", "I can't watch anything scary, I "
            "hide behind a cushion."),
           ("Would {name} enjoy a zombie movie marathon?", "Would {name} like a haunted house "
            "attraction?"), "no"),
)


# --- the data ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Turn:
    """One turn: ``text`` is what was said (no name prefix); ``at`` its moment (UTC)."""

    id: str
    session: int
    at: _dt.datetime
    speaker: str
    text: str


@dataclass(frozen=True)
class Question:
    """A third-person question; ``evidence`` the ids of the turns that answer it as known at
    ``asked_at``. Temporal ones carry the relative phrase, its session's date and the date it
    resolves to (``gold_date``: ``YYYY-MM-DD``, or ``YYYY-MM`` for "next month")."""

    id: str
    category: str
    person: str
    text: str
    answer: str
    evidence: tuple[str, ...]
    asked_at: _dt.datetime
    mid: bool
    relative: str | None = None
    session_date: str | None = None
    gold_date: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("id", "category", "person", "text", "answer",
                                              "mid", "relative", "session_date", "gold_date")}
        return out | {"evidence": list(self.evidence), "asked_at": _iso(self.asked_at)}


@dataclass(frozen=True)
class Dialogue:
    """One generated dialogue: two people, their dated sessions, turns and questions."""

    id: str
    half: str
    index: int
    seed: int
    people: tuple[str, str]
    sessions: tuple[_dt.datetime, ...]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    @property
    def key(self) -> str:
        """Names what the data is (for caches): version, half, seed and a digest of the turns
        (so that an edited template never reuses a store built from the old wording)."""
        digest = hashlib.sha256(json.dumps(
            [(t.id, t.speaker, t.text, _iso(t.at)) for t in self.turns]).encode()).hexdigest()
        return f"v{GENERATOR_VERSION}-{self.half}-{self.seed}-{digest[:12]}"

    def events(self, *, roles: str = "alternate", names: str = "speaker",
               account: str = "dialogue") -> list[str]:
        """The dialogue as a runtime event log (RUNTIME.md §1), one JSON line per event.

        ``roles``: ``alternate`` (the first person is ``user``, the second ``assistant``) or
        ``user`` (both ``user``). ``names``: ``speaker`` (the name in the message's
        ``speaker`` field, the content as said) or ``content`` (``"Ana: …"`` in the content
        and no ``speaker``: what a log without the field has to do)."""
        if roles not in ("alternate", "user"):
            raise ValueError(f"roles must be alternate or user, not {roles!r}")
        if names not in ("speaker", "content"):
            raise ValueError(f"names must be speaker or content, not {names!r}")
        c = self.id
        start = _iso(self.sessions[0])
        lines: list[dict[str, Any]] = [
            {"event": "conversation", "id": c, "account": account, "at": start,
             "title": f"{self.people[0]} and {self.people[1]}"},
            {"event": "participant", "id": "assistant", "model": "m", "conversation": c},
            {"event": "branch", "id": "main", "conversation": c},
        ]
        for t in self.turns:
            role = "assistant" if roles == "alternate" and t.speaker == self.people[1] else "user"
            line: dict[str, Any] = {"event": "message", "id": t.id, "branch": "main",
                                    "role": role, "conversation": c, "at": _iso(t.at)}
            if names == "speaker":
                line |= {"content": t.text, "speaker": t.speaker}
            else:
                line["content"] = f"{t.speaker}: {t.text}"
            lines.append(line)
        return [json.dumps(e, ensure_ascii=False) for e in lines]

    def end(self) -> _dt.datetime:
        """When the dialogue's last turn was said."""
        return self.turns[-1].at


def _iso(moment: _dt.datetime) -> str:
    return moment.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- relative dates ------------------------------------------------------------------------

def resolve_relative(phrase: str, said: _dt.date) -> str:
    """The absolute date ``phrase`` means when said on ``said``: ``YYYY-MM-DD``, or
    ``YYYY-MM`` for a month ("last month", "next month"). The phrases are the generator's own.
    ``last Saturday`` said on a Monday is two days before; said on a Saturday, a week before.
    ``this coming Friday``: the next Friday after the day said."""
    words = phrase.split()
    if phrase == "yesterday":
        return (said - _dt.timedelta(days=1)).isoformat()
    if phrase == "the day before yesterday":
        return (said - _dt.timedelta(days=2)).isoformat()
    if phrase == "tomorrow":
        return (said + _dt.timedelta(days=1)).isoformat()
    if phrase in ("last month", "next month"):
        month = said.month + (-1 if words[0] == "last" else 1)
        year = said.year + (month - 1) // 12
        return f"{year:04d}-{(month - 1) % 12 + 1:02d}"
    if words[0] == "last" and words[1] in _WEEKDAYS:
        back = (said.weekday() - _WEEKDAYS.index(words[1])) % 7 or 7
        return (said - _dt.timedelta(days=back)).isoformat()
    if words[:2] == ["this", "coming"]:
        ahead = (_WEEKDAYS.index(words[2]) - said.weekday()) % 7 or 7
        return (said + _dt.timedelta(days=ahead)).isoformat()
    numbers = {v: k for k, v in _NUMBERS.items()} | {"a": 1}
    if words[-1] == "ago":
        days = numbers[words[0]] * (7 if words[1].startswith("week") else 1)
        return (said - _dt.timedelta(days=days)).isoformat()
    if words[0] == "in":
        days = numbers[words[1]] * (7 if words[2].startswith("week") else 1)
        return (said + _dt.timedelta(days=days)).isoformat()
    raise ValueError(f"not a relative date of the generator: {phrase!r}")


def _relative(rng: random.Random, future: bool) -> str:
    if future:
        return rng.choice(["tomorrow", f"this coming {rng.choice(_WEEKDAYS)}", "next month",
                           "in two weeks", "in three days"])
    return rng.choice(["yesterday", "the day before yesterday", f"last {rng.choice(_WEEKDAYS)}",
                       f"last {rng.choice(_WEEKDAYS)}", f"{_NUMBERS[rng.choice((3, 4, 5))]} "
                       "days ago", "a week ago", "two weeks ago", "last month"])


def _month_of(gold: str) -> str:
    year, month = int(gold[:4]), int(gold[5:7])
    return f"{_MONTHS[month - 1]} {year}"


def _pretty(gold: str) -> str:
    if len(gold) == 7:
        return _month_of(gold)
    d = _dt.date.fromisoformat(gold)
    return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"


# --- building one dialogue ------------------------------------------------------------------

@dataclass
class _Line:
    speaker: str
    text: str
    tags: tuple[str, ...] = ()


@dataclass
class _Spec:
    """A question before it has turn ids: ``tags`` name its evidence lines, ``topic`` the
    lines on the same topic (later ones make a mid-dialogue question's known-at check)."""

    category: str
    person: str
    text: str
    answers: dict[str, str]  # tag -> the answer's words that line gives
    tags: tuple[str, ...]
    topic: tuple[str, ...] = ()
    relative: str | None = None
    said_tag: str | None = None  # the line whose session dates the relative phrase
    joint: bool = False  # every tag is needed (a single answer spread over lines)


@dataclass
class _Person:
    name: str
    gender: str
    hobbies: list[_Hobby] = field(default_factory=list)

    @property
    def pos(self) -> str:
        return "her" if self.gender == "f" else "his"


class _Builder:
    """Plans the facts of both people onto sessions, renders the turns, then the questions."""

    def __init__(self, half: str, index: int) -> None:
        base, variant = HALVES[half]
        self.half, self.index, self.variant = half, index, variant
        self.seed = base + index
        self.rng = random.Random(f"vigente-dialogue:{GENERATOR_VERSION}:{half}:{self.seed}")
        # two people per dialogue, none of them in another dialogue of the half (up to 11)
        pool = list(_PEOPLE[half])
        random.Random(f"vigente-dialogue-people:{half}").shuffle(pool)
        first = (2 * index) % len(pool)
        self.people = [_Person(*pool[first]), _Person(*pool[first + 1])]
        self.sessions = self._sessions()
        # session index -> blocks of lines; each block said together
        self.blocks: list[list[list[_Line]]] = [[] for _ in self.sessions]
        self.specs: list[_Spec] = []
        self.tag_session: dict[str, int] = {}

    def pick(self, options: Sequence[Any]) -> Any:
        return self.rng.choice(_half(options, self.variant))

    def _sessions(self) -> list[_dt.datetime]:
        rng = self.rng
        count = rng.randint(20, 35)
        span = rng.randint(183, 365)
        start = _dt.date(2022, 1, 3) + _dt.timedelta(days=rng.randint(0, 540))
        days = sorted(rng.sample(range(1, span), count - 2) + [0, span])
        return [_dt.datetime.combine(start + _dt.timedelta(days=d),
                                     _dt.time(rng.randint(8, 21), rng.randint(0, 59)),
                                     tzinfo=_dt.UTC) for d in days]

    def other(self, p: _Person) -> _Person:
        return self.people[1] if p is self.people[0] else self.people[0]

    def place(self, session: int, block: list[_Line]) -> None:
        self.blocks[session].append(block)
        for line in block:
            for tag in line.tags:
                self.tag_session.setdefault(tag, session)

    def fill(self, template: str, p: _Person, **values: str) -> str:
        text = template.format(other=self.other(p).name, pos=p.pos, **values)
        return text[0].upper() + text[1:]

    def react(self, p: _Person, mood: str) -> _Line:
        """The other person's reaction to ``p``'s news (chit-chat, sometimes by name)."""
        pool = {"good": _REACT_GOOD, "bad": _REACT_BAD}.get(mood, _REACT_MEH)
        return _Line(self.other(p).name, self.fill(self.pick(pool), self.other(p)))

    def said_date(self, session: int) -> _dt.date:
        return self.sessions[session].date()

    # -- facts ----------------------------------------------------------------------------

    def attributes(self, p: _Person, taken: dict[str, set[str]]) -> None:
        n = len(self.sessions)
        for attr in _ATTRIBUTES:
            choices = [o for o in attr.objects if o[0] not in taken.setdefault(attr.kind, set())]
            answer, words = self.rng.choice(choices)
            taken[attr.kind].add(answer)
            first = self.rng.randrange(0, n * 2 // 3)
            tag = f"{p.name}:{attr.kind}"
            self.place(first, [_Line(p.name, self.fill(self.pick(attr.say), p, o=words), (tag,)),
                               self.react(p, "meh")])
            topic = [tag]
            if self.rng.random() < 0.45 and first < n - 2:
                again = self.rng.randrange(first + 2, n)
                self.place(again, [_Line(p.name, self.fill(self.pick(attr.again), p, o=words),
                                         (tag + ":again",))])
                topic.append(tag + ":again")
            self.specs.append(_Spec("single-hop", p.name, self.fill(self.pick(attr.ask), p,
                                                                    name=p.name),
                                    {tag: answer, tag + ":again": answer}, tuple(topic),
                                    tuple(topic)))

    def pets(self, p: _Person, names: list[str]) -> None:
        kinds = self.rng.sample(_PETS, self.rng.choice((1, 2, 2)))
        tags = []
        answers = {}
        for animal, hyper, breeds in kinds:
            breed, pet = self.rng.choice(breeds), names.pop()
            s = self.rng.randrange(len(self.sessions))
            tag = f"{p.name}:pet:{animal}"
            block = [_Line(p.name, self.fill(self.pick(_PET_SAY), p, hyper=hyper),
                           (tag + ":said",)),
                     _Line(self.other(p).name, self.pick(_PET_ASK_KIND)),
                     _Line(p.name, self.fill(self.pick(_PET_ANSWER), p, breed=breed, pet=pet,
                                                   animal=animal),
                           (tag,)),
                     self.react(p, "good")]
            self.place(s, block)
            for template, slot in _half(_PET_ASK, self.variant):
                self.specs.append(_Spec("single-hop", p.name,
                                        template.format(name=p.name, animal=animal),
                                        {tag: breed if slot == "breed" else pet}, (tag,)))
            tags.append(tag)
            answers[tag] = f"a {animal} ({breed}) called {pet}"
        if len(tags) > 1:
            self.specs.append(_Spec("multi-hop", p.name,
                                    self.pick(_PETS_LIST_ASK).format(name=p.name), answers,
                                    tuple(tags), tuple(tags)))

    def hobbies(self) -> None:
        a, b = self.people
        shared = self.rng.random() < 0.7
        pool = list(_HOBBIES)
        self.rng.shuffle(pool)
        if shared:
            a.hobbies, b.hobbies = [pool[0], pool[1], pool[2]], [pool[0], pool[3], pool[4]]
        else:
            a.hobbies, b.hobbies = pool[:3], pool[3:6]
        for p in self.people:
            firsts = {}
            for hobby in p.hobbies:
                firsts[hobby.name] = self.hobby(p, hobby)
            tags = tuple(firsts.values())
            self.specs.append(_Spec("multi-hop", p.name,
                                    self.pick(_HOBBY_LIST_ASK).format(name=p.name),
                                    {t: t.split(":")[2] for t in tags}, tags, tags))
        if shared:
            h = pool[0].name
            tags = (f"{a.name}:hobby:{h}:0", f"{b.name}:hobby:{h}:0")
            self.specs.append(_Spec("multi-hop", a.name,
                                    self.pick(_HOBBY_SHARED_ASK).format(a=a.name, b=b.name),
                                    dict.fromkeys(tags, h), tags, tags, joint=True))

    def hobby(self, p: _Person, hobby: _Hobby) -> str:
        """Two to four sessions in which ``p`` tells of a piece of ``hobby``; the questions
        on each (dated, when) and on all of them. Returns the first mention's tag."""
        n = len(self.sessions)
        count = self.rng.randint(3, 5)
        sessions = sorted(self.rng.sample(range(n), count))
        objects = self.rng.sample(hobby.objects, count)
        tags, answers, months = [], {}, []
        when: list[_Spec] = []
        for i, (s, o) in enumerate(zip(sessions, objects, strict=True)):
            rel = _relative(self.rng, future=False)
            tag = f"{p.name}:hobby:{hobby.name}:{i}"
            say = self.pick(hobby.say + _HOBBY_SAY)
            self.place(s, [_Line(p.name, self.fill(say, p, o=o, r=rel, hobby=hobby.name),
                                 (tag,)),
                           self.react(p, "good")])
            tags.append(tag)
            answers[tag] = o
            gold = resolve_relative(rel, self.said_date(s))
            months.append(gold[:7])
            self.specs.append(_Spec("temporal", p.name,
                                    self.pick(hobby.ask_when).format(name=p.name, o=o),
                                    {tag: o}, (tag,), relative=rel, said_tag=tag))
            when.append(self.specs[-1])
        all_tags = tuple(tags)
        for spec in when:  # later pieces of the same hobby: a known-at check when asked mid
            spec.topic = all_tags
        for tag, month in zip(tags, months, strict=True):
            if months.count(month) == 1:
                ask = self.pick(hobby.ask_dated + _HOBBY_ASK_DATED)
                self.specs.append(_Spec("single-hop", p.name, ask.format(
                                        name=p.name, month=_month_of(month), hobby=hobby.name),
                                        {tag: answers[tag]}, (tag,), all_tags))
        self.specs.append(_Spec("multi-hop", p.name, self.pick(hobby.ask_list)
                                .format(name=p.name), answers, all_tags, all_tags))
        return tags[0]

    def trips(self) -> None:
        n = len(self.sessions)
        cities = list(_CITIES)
        self.rng.shuffle(cities)
        visited: dict[str, list[str]] = {}
        for p in self.people:
            count = self.rng.randint(3, 4)
            mine = [cities.pop() for _ in range(count)]
            if visited and self.rng.random() < 0.5:  # the same city as the other, another time
                mine[0] = self.rng.choice(next(iter(visited.values())))
            visited[p.name] = mine
            sessions = sorted(self.rng.sample(range(n), count))
            tags, answers, months = [], {}, []
            for i, (s, city) in enumerate(zip(sessions, mine, strict=True)):
                rel = _relative(self.rng, future=False)
                tag = f"{p.name}:trip:{i}"
                self.place(s, [_Line(p.name, self.fill(self.pick(_TRIP_SAY), p, r=rel),
                                     (tag + ":said",)),
                               _Line(self.other(p).name, self.pick(_TRIP_ASK)),
                               _Line(p.name, self.fill(self.pick(_TRIP_ANSWER), p, o=city),
                                     (tag,)),
                               self.react(p, "good")])
                tags.append(tag)
                answers[tag] = city
                gold = resolve_relative(rel, self.said_date(s))
                months.append(gold[:7])
                self.specs.append(_Spec("temporal", p.name,
                                        self.pick(_TRIP_WHEN).format(name=p.name, o=city),
                                        {tag + ":said": "", tag: city}, (tag + ":said", tag),
                                        relative=rel, said_tag=tag + ":said", joint=True))
            for tag, month in zip(tags, months, strict=True):
                if months.count(month) == 1:
                    self.specs.append(_Spec("single-hop", p.name, self.pick(_TRIP_DATED)
                                            .format(name=p.name, month=_month_of(month)),
                                            {tag: answers[tag]}, (tag,), tuple(tags)))
            self.specs.append(_Spec("multi-hop", p.name,
                                    self.pick(_TRIP_LIST).format(name=p.name), answers,
                                    tuple(tags), tuple(tags)))

    def life_events(self, relatives: list[str]) -> None:
        n = len(self.sessions)
        pool = list(_EVENTS)
        self.rng.shuffle(pool)
        share = len(pool) // 2
        for p, events in zip(self.people, (pool[:share], pool[share:]), strict=True):
            chosen = events[:self.rng.randint(7, share)]
            groups: dict[str, dict[str, str]] = {}
            for i, ev in enumerate(chosen):
                s = self.rng.randrange(n)
                rel = _relative(self.rng, future=ev.group == "plan")
                relation, _ = self.rng.choice(_RELATIONS)
                values = {"rel": relation, "rn": relatives.pop(), "r": rel}
                tag = f"{p.name}:event:{ev.group}:{i}"
                block = [_Line(p.name, self.fill(self.pick(ev.say), p, **values), (tag,)),
                         self.react(p, ev.mood)]
                if ev.mood in _FEEL and self.rng.random() < 0.5:
                    # a short answer that needs the turns before it
                    feeling = self.pick(_FEEL[ev.mood])
                    block += [_Line(self.other(p).name, self.pick(_FEEL_ASK)),
                              _Line(p.name, feeling, (tag + ":feel",))]
                    self.specs.append(_Spec("single-hop", p.name, self.pick(_FEEL_QUESTION)
                                            .format(name=p.name, a=ev.answer),
                                            {tag + ":feel": feeling}, (tag + ":feel",)))
                elif ev.mood != "meh" and self.rng.random() < 0.5:
                    block.append(_Line(p.name, self.fill(self.pick(_THANKS), p)))
                self.place(s, block)
                self.specs.append(_Spec("temporal", p.name, self.pick(ev.ask).format(
                    name=p.name, rel=relation), {tag: ev.answer}, (tag,), relative=rel,
                    said_tag=tag))
                groups.setdefault(ev.group, {})[tag] = ev.answer
            for group, answers in groups.items():
                if group in _EVENT_LIST and len(answers) > 1:
                    tags = tuple(answers)
                    self.specs.append(_Spec("multi-hop", p.name, self.pick(_EVENT_LIST[group])
                                            .format(name=p.name), answers, tags, tags))

    def tastes(self) -> None:
        n = len(self.sessions)
        pool = list(_TASTES)
        self.rng.shuffle(pool)
        for p, tastes in zip(self.people, (pool[:5], pool[5:]), strict=True):
            for i, taste in enumerate(tastes[:self.rng.randint(3, 5)]):
                tag = f"{p.name}:taste:{i}"
                self.place(self.rng.randrange(n), [
                    _Line(p.name, self.fill(self.pick(taste.say), p), (tag,)),
                    self.react(p, "meh")])
                answer = ("likely yes" if taste.answer == "yes" else "likely no")
                self.specs.append(_Spec("open-domain", p.name,
                                        self.pick(taste.ask).format(name=p.name),
                                        {tag: answer}, (tag,)))

    # -- rendering ------------------------------------------------------------------------

    def render(self) -> list[tuple[Turn, tuple[str, ...]]]:
        """Every session: a greeting, its facts among small talk, a goodbye; 12–30 turns."""
        out: list[tuple[Turn, tuple[str, ...]]] = []
        for s, start in enumerate(self.sessions):
            opener = self.people[self.rng.randrange(2)]
            lines = [_Line(opener.name, self.fill(self.pick(_GREET_OPEN), opener)),
                     _Line(self.other(opener).name,
                           self.fill(self.pick(_GREET_BACK), self.other(opener)))]
            blocks = list(self.blocks[s])
            self.rng.shuffle(blocks)
            body = sum(len(b) for b in blocks)
            deck = _half(_SMALL_TALK, self.variant)
            self.rng.shuffle(deck)
            target = self.rng.randint(12, 30) - 4
            while body < target:
                speaker = self.people[self.rng.randrange(2)]
                said, answer = deck.pop() if deck else self.rng.choice(_SMALL_TALK)
                talk = [_Line(speaker.name, said), _Line(self.other(speaker).name, answer)]
                if self.rng.random() < 0.4:
                    talk.append(_Line(speaker.name, self.fill(self.pick(_FOLLOW_UP), speaker)
                                      if self.rng.random() < 0.3 else self.pick(_REACT_MEH)))
                blocks.insert(self.rng.randrange(len(blocks) + 1), talk)
                body += len(talk)
            for block in blocks:
                lines.extend(block)
            closer = self.people[self.rng.randrange(2)]
            lines += [_Line(closer.name, self.fill(self.pick(_CLOSE), closer)),
                      _Line(self.other(closer).name, self.pick(_CLOSE_BACK))]
            at = start
            for t, line in enumerate(lines):
                if t:
                    at += _dt.timedelta(seconds=self.rng.randint(20, 60))
                out.append((Turn(f"s{s + 1:02d}-t{t + 1:02d}", s, at, line.speaker, line.text),
                            line.tags))
        return out

    def questions(self, turns: list[tuple[Turn, tuple[str, ...]]]) -> list[Question]:
        """Each spec as a question asked after the last session, or for about 15 % of those
        with later turns on their topic, between two sessions before those turns."""
        by_tag: dict[str, Turn] = {}
        for turn, tags in turns:
            for tag in tags:
                by_tag[tag] = turn
        last = turns[-1][0].at
        end = last + _dt.timedelta(days=1)
        out: list[Question] = []
        for n, spec in enumerate(self.specs):
            present = [t for t in spec.tags if t in by_tag]
            if not present:
                continue
            asked, mid = end, False
            evidence = present
            later = self._mid_point(spec, by_tag) if self.rng.random() < 0.34 else None
            if later is not None:
                asked, mid = later, True
                evidence = [t for t in present if by_tag[t].at < asked]
            answer_words = [spec.answers[t] for t in evidence if spec.answers.get(t)]
            relative = session_date = gold = None
            if spec.relative is not None and spec.said_tag is not None:
                said = by_tag[spec.said_tag]
                relative, session_date = spec.relative, said.at.date().isoformat()
                gold = resolve_relative(spec.relative, said.at.date())
                answer_words = [_pretty(gold)]
            out.append(Question(
                f"{self.half}-{self.index}-q{n:03d}", spec.category, spec.person, spec.text,
                ", ".join(dict.fromkeys(answer_words)),
                tuple(sorted({by_tag[t].id for t in evidence})), asked, mid, relative,
                session_date, gold))
        return out

    def _mid_point(self, spec: _Spec, by_tag: dict[str, Turn]) -> _dt.datetime | None:
        """A moment between two sessions after (some of) the evidence and before a later turn
        on the same topic; ``None`` when the spec has no later turn on its topic."""
        topic = [by_tag[t] for t in spec.topic if t in by_tag]
        evidence = [by_tag[t] for t in spec.tags if t in by_tag]
        if not topic or not evidence:
            return None
        first_needed = (max if spec.joint or len(evidence) == 1 else min)(
            t.session for t in evidence)
        later = [t.session for t in topic if t.session > first_needed]
        if not later:
            return None
        boundary = self.rng.randint(first_needed + 1, max(later))
        # halfway between the end of session boundary-1 and the start of session boundary
        before = self.sessions[boundary - 1] + _dt.timedelta(hours=2)
        return before + (self.sessions[boundary] - before) / 2


def dialogue(half: str, index: int) -> Dialogue:
    """The ``index``-th dialogue of ``half`` (``fitted`` or ``held-out``)."""
    if half not in HALVES:
        raise ValueError(f"half must be one of {', '.join(HALVES)}, not {half!r}")
    b = _Builder(half, index)
    relatives = list(_RELATIVES[half]) * 4
    pets = list(_PET_NAMES[half])
    b.rng.shuffle(relatives)
    b.rng.shuffle(pets)
    taken: dict[str, set[str]] = {}
    for p in b.people:
        b.attributes(p, taken)
        b.pets(p, pets)
    b.hobbies()
    b.trips()
    b.life_events(relatives)
    b.tastes()
    rendered = b.render()
    questions = b.questions(rendered)
    a, c = b.people
    return Dialogue(f"dialogue-{half}-{index}", half, index, b.seed, (a.name, c.name),
                    tuple(b.sessions), tuple(t for t, _ in rendered), tuple(questions))


def dialogues(half: str, count: int) -> list[Dialogue]:
    """The first ``count`` dialogues of ``half``."""
    return [dialogue(half, i) for i in range(count)]

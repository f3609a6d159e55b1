"""The values a text states, read deterministically, and whether a tool result holds them.

A writer's memory stands in a tool result's place only for values the result holds
(invariant 9). Its facts are checked by path (:func:`~vigente.runtime.artifact_memory.unheld`);
its summary is free text, so :func:`stated` reads from it every value it states, and
:class:`Held` is the same reading of the result's own text (its keys, its strings, its
numbers' JSON text, exactly as written). A summary value is supported when the result holds
it; :func:`unsupported` names the ones it does not, with why.

What a value is, and when two are the same (docs/guarantees.md, "What stands in a tool
result's place"):

* a **number** is read exactly, never as a float: the same number is the same decimal value
  (``10``, ``10.0`` and ``10.00`` are one number; ``10.001`` is not ``10``; nothing is rounded;
  a sign is part of it: ``-10`` is not ``10``). Grouping marks are read when they cannot mean
  anything else (``1,234.5``, ``1.234,5``, ``1'234``, ``1,234,567``); a form that reads two ways
  (``1,234`` or ``1.234``: a thousand and more, or one and a bit) is the number only when the
  result holds that very text. A percentage is read as its number (``15%`` is ``15``, never
  ``0.15``);
* a **date** is a calendar date, whatever its form among ISO (``2024-05-01``, with a time and
  zone), named months (``1 May 2024``, ``May 1, 2024``, ``May 2024``, ``1 May``) and numeric
  ``d/m/y`` when only one reading is a date (``25/12/2024``; ``01/05/2024`` reads two ways and
  needs its own text); a **time** is hours, minutes and seconds;
* an **id** or code (``ORD-1234``, ``#W123``, ``mia_li_3668``, ``10kg``: a token with a digit, an
  underscore, ``#`` or ``@``), an **email** and a **URL** are their exact text (an email's case
  aside; a leading ``#`` aside);
* a **currency** symbol is supported by the symbol or one of its ISO codes (``$``: ``USD``,
  ``CAD``, …); any other **symbol** (``₿``, ``✅``, ``>``) by the same symbol;
* a **quoted** string is the exact text of a string (a key, a line of a text result) the
  result holds;
* every other **word** (a name, a code, a status, a drug) is a word the result holds, case
  aside, unless it is one of a fixed list of English function words (articles, pronouns,
  prepositions, auxiliaries). Negations (``not``, ``never``, ``isn't``) are not in the list.

The reading is linear in the text (one scan, one classification per distinct token).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Held", "Stated", "held_by", "stated", "unsupported"]

#: English closed-class words that carry no value of their own (negations excluded: they
#: change what a value means, so a result must hold them).
FUNCTION_WORDS = frozenset("""
a an the this that these those it its it's he she they we you i me him her them us his hers
their theirs our ours your yours my mine is are was were be been being am has have had having
do does did will would shall should can could may might must of in on at to for from by with
into onto about as per via and or but so if also there here which who whom whose what when
where how while then
""".split())

#: A currency symbol and the ISO codes it may stand for.
CURRENCIES: dict[str, tuple[str, ...]] = {
    "$": ("usd", "cad", "aud", "nzd", "hkd", "sgd", "mxn", "us$"),
    "€": ("eur",), "£": ("gbp",), "¥": ("jpy", "cny"), "₹": ("inr",), "₩": ("krw",),
    "₽": ("rub",), "₺": ("try",), "₪": ("ils",), "₫": ("vnd",), "₴": ("uah",),
    "₦": ("ngn",), "฿": ("thb",), "₱": ("php",), "₣": ("chf",),
}
#: A currency word and the codes it may stand for (a word the result holds also does).
_CURRENCY_WORDS: dict[str, tuple[str, ...]] = {
    "dollar": CURRENCIES["$"], "dollars": CURRENCIES["$"], "euro": ("eur",),
    "euros": ("eur",), "pound": ("gbp",), "pounds": ("gbp",), "yen": ("jpy",),
    "yuan": ("cny",), "renminbi": ("cny",), "rupee": ("inr",), "rupees": ("inr",),
    "franc": ("chf",), "francs": ("chf",),
}

_MONTHS = {
    name: n
    for n, names in enumerate(
        (("January", "Jan"), ("February", "Feb"), ("March", "Mar"), ("April", "Apr"),
         ("May",), ("June", "Jun"), ("July", "Jul"), ("August", "Aug"),
         ("September", "Sep", "Sept"), ("October", "Oct"), ("November", "Nov"),
         ("December", "Dec")), start=1)
    for base in names
    for name in (base, base.upper())
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"
#: Values a summary states over more than one token: a quoted string, a named-month date
#: (the text between them is read token by token).
_SPANS = re.compile(
    r'"(?P<q1>[^"\n]{1,500})"|“(?P<q2>[^”\n]{1,500})”|«(?P<q3>[^»\n]{1,500})»'
    r"|„(?P<q4>[^“\n]{1,500})“|(?<![\w'’])'(?P<q5>[^'\n]{1,500})'(?![\w'’])"
    rf"|(?<![\w.])(?:(?P<d1>\d{{1,2}}){_ORD}\s+(?P<m1>{_MONTH})\.?(?:,?\s+(?P<y1>\d{{4}}))?"
    rf"|(?P<m2>{_MONTH})\.?\s+(?P<d2>\d{{1,2}}){_ORD}(?:,?\s+(?P<y2>\d{{4}}))?"
    rf"|(?P<m3>{_MONTH})\.?\s+(?P<y3>\d{{4}}))(?![\w])"
)
#: The named-month dates alone (a result's text is read for them, its tokens apart).
_NAMED_DATES = re.compile(
    rf"(?<![\w.])(?:(?P<d1>\d{{1,2}}){_ORD}\s+(?P<m1>{_MONTH})\.?(?:,?\s+(?P<y1>\d{{4}}))?"
    rf"|(?P<m2>{_MONTH})\.?\s+(?P<d2>\d{{1,2}}){_ORD}(?:,?\s+(?P<y2>\d{{4}}))?"
    rf"|(?P<m3>{_MONTH})\.?\s+(?P<y3>\d{{4}}))(?![\w])"
)
_EDGE_OPEN = "([{<\"'“‘«„*_~`"
_EDGE_CLOSE = ")]}>\"'”’».,;:!?…*_~`"
_URL = re.compile(r"https?://\S+")
_EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)+")
_ISO = re.compile(
    r"(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"
    r"(?:[T ](?P<H>\d{2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?P<f>\.\d+)?)?"
    r"(?P<z>Z|[+-]\d{2}:?\d{2})?)?"
)
_DMY = re.compile(r"(?P<a>\d{1,2})(?P<s>[./])(?P<b>\d{1,2})(?P=s)(?P<y>\d{4}|\d{2})")
_TIME = re.compile(r"(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2}))?")
_NUMBER = re.compile(
    r"(?P<sign>[-+\u2212])?"
    r"(?P<int>\d{1,3}(?:(?P<sep>[,.'\u00a0\u202f\u2009’])\d{3})(?:(?P=sep)\d{3})*|\d+)"
    r"(?:(?P<dec>[.,])(?P<frac>\d+))?"
    r"(?:[eE](?P<exp>[-+]?\d{1,6}))?"
    r"%?"
)
_JSON_NUMBER = re.compile(r"(?P<sign>-)?(?P<int>\d+)(?:\.(?P<frac>\d+))?(?:[eE](?P<exp>[-+]?\d+))?")
_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_DASHES = re.compile(r"[-–—]")
_PAIRS = re.compile(r"[=:]")


@dataclass(frozen=True, slots=True)
class Stated:
    """One value a text states: its ``kind`` (number, date, time, currency, id, email, url,
    quote, name, code, word), its ``text`` as written, the ``keys`` any of which a result
    holding it holds, and a ``note`` when its form reads two ways."""

    kind: str
    text: str
    keys: tuple[str, ...]
    note: str | None = None


def _canon_number(negative: bool, digits: str, exponent: int) -> str:
    """A number's exact identity: its significant digits and the power of ten (no float,
    no rounding: ``10`` and ``10.00`` are ``1e1``, ``-0`` is ``0``)."""
    digits = digits.lstrip("0")
    if not digits:
        return "n:0"
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return f"n:{'-' if negative else ''}{stripped}e{exponent}"


def json_number_keys(text: str) -> tuple[str, ...]:
    """The keys of a JSON number as written (``.`` is always its decimal point)."""
    m = _JSON_NUMBER.fullmatch(text)
    if m is None or (m["exp"] and len(m["exp"]) > 18):
        return (f"t:{text}",)
    frac = m["frac"] or ""
    exponent = int(m["exp"] or 0) - len(frac)
    return (_canon_number(bool(m["sign"]), m["int"] + frac, exponent), f"t:{text}")


def _number(core: str) -> Stated | None:
    """A number token (``None``: not one): its one exact reading, or only its text when it
    reads two ways."""
    m = _NUMBER.fullmatch(core)
    if m is None:
        return None
    sep, dec = m["sep"], m["dec"]
    if sep is not None and (dec == sep or m["exp"]):
        return None  # "1,234,5", "1,234e5": not a number, an id
    negative = m["sign"] in ("-", "\u2212")
    groups = m["int"].split(sep) if sep is not None else []
    if groups and groups[0].startswith("0"):
        if len(groups) > 2 or sep not in (",", "."):
            return None  # "0,500,000": no grouping starts with a zero
        sep, dec, groups = None, sep, []  # "0,500": a decimal mark
        whole, frac = m["int"].split(dec)[0], m["int"].split(dec)[1] + (m["frac"] or "")
        if m["dec"] is not None:
            return None  # "0,500.5"
    else:
        whole = m["int"] if sep is None else m["int"].replace(sep, "")
        frac = m["frac"] or ""
    exponent = int(m["exp"] or 0) - len(frac)
    reading = _canon_number(negative, whole + frac, exponent)
    verbatim = f"t:{core.rstrip('%')}"
    if sep in (",", ".") and dec is None and len(groups) == 2 and groups[0] != "0":
        # "1,234": a thousand and more, or one and a bit; only its own text is the same
        other = _canon_number(negative, groups[0] + groups[1], -3)
        if other != reading:
            return Stated("number", core, (verbatim,),
                          note=f"reads two ways ({whole} or {groups[0]}.{groups[1]})")
    return Stated("number", core, (reading, verbatim))


def _date_keys(y: int, m: int, d: int) -> str:
    return f"d:{y:04}-{m:02}-{d:02}"


def _iso(core: str) -> Stated | None:
    m = _ISO.fullmatch(core)
    if m is None:
        return None
    day = _date_keys(int(m["y"]), int(m["m"]), int(m["d"]))
    if m["H"] is None:
        return Stated("date", core, (day, f"t:{core}"))
    frac = (m["f"] or "").rstrip("0").rstrip(".")
    at = f"{day[2:]}T{m['H']}:{m['M']}:{m['S'] or '00'}{frac}"
    if m["z"] is None:
        return Stated("date", core, (f"dt:{at}", f"t:{core}"))
    return Stated("date", core, (f"dz:{at}{_zone(m['z'])}", f"t:{core}"))


def _zone(z: str) -> str:
    if z == "Z":
        return "+00:00"
    return z if ":" in z else f"{z[:3]}:{z[3:]}"


def _iso_held(core: str) -> list[str]:
    """Every key a result holding this ISO date (or date-time) holds: the date, its month,
    its day of the year, its time, and the date-time with and without its zone."""
    m = _ISO.fullmatch(core)
    if m is None:
        return []
    y, mo, d = int(m["y"]), int(m["m"]), int(m["d"])
    keys = [_date_keys(y, mo, d), f"d:{y:04}-{mo:02}", f"d:--{mo:02}-{d:02}", f"t:{core}"]
    if m["H"] is not None:
        frac = (m["f"] or "").rstrip("0").rstrip(".")
        at = f"{keys[0][2:]}T{m['H']}:{m['M']}:{m['S'] or '00'}{frac}"
        keys += [f"dt:{at}", f"tm:{m['H']}:{m['M']}:{m['S'] or '00'}"]
        if m["z"] is not None:
            keys.append(f"dz:{at}{_zone(m['z'])}")
    return keys


def _dmy(core: str) -> Stated | None:
    m = _DMY.fullmatch(core)
    if m is None:
        return None
    a, b, y = int(m["a"]), int(m["b"]), m["y"]
    readings = {(d, mo) for d, mo in ((a, b), (b, a)) if 1 <= mo <= 12 and 1 <= d <= 31}
    if len(y) == 4 and len(readings) == 1:
        ((d, mo),) = readings
        return Stated("date", core, (_date_keys(int(y), mo, d), f"t:{core}"))
    return Stated("date", core, (f"t:{core}",),
                  note="reads two ways (day/month or month/day, or the century)")


def _time(core: str) -> Stated | None:
    m = _TIME.fullmatch(core)
    if m is None or int(m["H"]) > 24:
        return None
    return Stated("time", core, (f"tm:{int(m['H']):02}:{m['M']}:{m['S'] or '00'}",
                                 f"t:{core}"))


def _span(m: re.Match[str]) -> Stated:
    """A quoted string or a named-month date the scan found."""
    for q in ("q1", "q2", "q3", "q4", "q5"):
        if q in m.re.groupindex and m[q] is not None:
            inner = m[q].strip()
            return Stated("quote", inner, (f"q:{inner}",))
    text = m.group(0)
    if m["m3"] is not None:
        return Stated("date", text, (f"d:{int(m['y3']):04}-{_MONTHS[m['m3']]:02}",))
    month = _MONTHS[m["m1"] or m["m2"]]
    day, year = int(m["d1"] or m["d2"]), m["y1"] or m["y2"]
    if year is None:
        return Stated("date", text, (f"d:--{month:02}-{day:02}",))
    return Stated("date", text, (_date_keys(int(year), month, day),))


def _strip(token: str) -> str:
    core = token.lstrip(_EDGE_OPEN).rstrip(_EDGE_CLOSE)
    for tail in ("'s", "’s"):
        if core.endswith(tail) and len(core) > 2 and core[-3].isalpha():
            core = core[:-2]
    return core


def _classify(core: str) -> list[Stated]:
    """The values one token (edge punctuation off) states."""
    if not core:
        return []
    if _URL.fullmatch(core):
        return [Stated("url", core, (f"x:{core}",))]
    if _EMAIL.fullmatch(core):
        return [Stated("email", core, (f"x:{core.casefold()}",))]
    for read in (_iso, _dmy, _time):
        found = read(core)
        if found is not None:
            return [found]
    if "=" in core or ":" in core:  # "v=1", "balance:10": a key and its value
        return [s for piece in _PAIRS.split(core) for s in _classify(_strip(piece))]
    out: list[Stated] = []
    sign = ""
    if len(core) > 1 and core[0] in "-+\u2212" and core[1] in CURRENCIES:  # "-$10"
        sign, core = core[0], core[1:]
    while core and core[0] in CURRENCIES:  # "$10", "€-5"
        out.append(_currency(core[0]))
        core = core[1:]
    tail: list[Stated] = []
    while core and core[-1] in CURRENCIES:  # "10€"
        tail.insert(0, _currency(core[-1]))
        core = core[:-1]
    if core:
        out += _value(sign + core)
    return out + tail


def _currency(symbol: str) -> Stated:
    codes = CURRENCIES[symbol]
    return Stated("currency", symbol, (f"x:{symbol}", *(f"w:{c}" for c in codes)))


def _value(core: str) -> list[Stated]:
    number = _number(core)
    if number is not None:
        return [number]
    if any(c.isdigit() for c in core) or "_" in core or "#" in core or "@" in core:
        pieces = _DASHES.split(core)
        if len(pieces) > 1 and all(p and (_iso(p) or _time(p)) for p in pieces):
            return [s for p in pieces for s in _classify(p)]  # "14:00-15:00": a range
        ident = core.lstrip("#")
        return [Stated("id", core, (f"x:{ident}", f"t:{core}"))]
    # a symbol states a value too (a currency, a sign, a check mark); punctuation does not
    out = [Stated("symbol", c, (f"x:{c}",)) for c in dict.fromkeys(core)
           if unicodedata.category(c).startswith("S") and c not in "^`"]
    for word in _WORDS.findall(core):
        folded = word.casefold()
        if folded in FUNCTION_WORDS:
            continue
        kind = "code" if len(word) > 1 and word.isupper() else (
            "name" if word[0].isupper() else "word")
        keys = (f"w:{folded}", *(f"w:{c}" for c in _CURRENCY_WORDS.get(folded, ())))
        out.append(Stated(kind, word, keys))
    return out


def stated(text: str) -> Iterator[Stated]:
    """Every value ``text`` states, in order (a value stated twice, twice; each distinct
    token is read once)."""
    read: dict[str, list[Stated]] = {}
    at = 0
    for m in _SPANS.finditer(text):
        yield from _tokens(text[at:m.start()], read)
        at = m.end()
        found = _span(m)
        if found.kind == "quote" and not any(c.isspace() for c in found.text):
            yield from _classify(_strip(found.text))  # '"10"' states the number 10
        else:
            yield found
    yield from _tokens(text[at:], read)


def _tokens(text: str, read: dict[str, list[Stated]]) -> Iterator[Stated]:
    """The values of the tokens of ``text`` (between spans), each distinct token read once."""
    for token in text.split():
        values = read.get(token)
        if values is None:
            values = read[token] = _classify(_strip(token))
        yield from values


#: Values under one key at most for the key to bind what follows it (a wider subtree binds
#: nothing: any value the result holds may follow its name).
MAX_UNDER = 2_000
#: Nesting read for keys and what they hold (deeper values are held, bound to no deeper key).
_KEY_DEPTH = 8
_NUMERIC = frozenset({"number", "date", "time", "id", "email", "url"})


class Held:
    """What a set of tool results holds, read as :func:`stated` reads a summary: one key per
    value (a number's exact reading and text, a date's day, month and time, an id's text, a
    word case aside, each string whole for a quote), plus ``names`` given (the cited calls'
    tool names, which the request shows as the call). ``under``: for each key of the results
    (case aside), the values its subtree holds (``None``: too many to bind)."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.keys: set[str] = set()
        self.under: dict[str, set[str] | None] = {}
        self._read: dict[str, tuple[str, ...]] = {}  # token -> its keys, each read once
        for name in names:
            self.keys.update(self._text_keys(name))

    def holds(self, value: Stated) -> bool:
        return any(k in self.keys for k in value.keys)

    def holds_under(self, name: str, value: Stated) -> bool:
        """Does a key named ``name`` (case aside) hold ``value`` in its subtree (true when
        ``name`` is no key, or one too wide to bind)?"""
        found = self.under.get(name.casefold(), ...)
        if found is ... or found is None:
            return True
        return any(k in found for k in value.keys)

    def add_json(self, value: Any) -> None:
        """Every key, string and number of a JSON value read exactly
        (:func:`~vigente.runtime.artifact_memory.parse_exact`), and what each key holds."""
        self._subtree(value, 0)

    def _subtree(self, value: Any, depth: int) -> set[str]:
        from vigente.runtime.artifact_memory import JSONNumber

        if isinstance(value, dict):
            total: set[str] = set()
            for key, child in value.items():
                self.keys.update(self._text_keys(str(key)))
                self.keys.add(f"q:{str(key).strip()}")
                held = self._child(child, depth)
                self._bind(str(key), held)
                total |= held
            return total
        if isinstance(value, list):
            total = set()
            for child in value:
                total |= self._child(child, depth)
            return total
        if isinstance(value, str):
            keys = {*self._text_keys(value), f"q:{value.strip()}"}
        elif isinstance(value, bool) or value is None:
            keys = {f"w:{'null' if value is None else str(value).lower()}"}
        elif isinstance(value, JSONNumber | int | float):
            keys = set(json_number_keys(value.text if isinstance(value, JSONNumber)
                                        else repr(value)))
        else:  # pragma: no cover - JSON has no other kinds
            keys = set()
        self.keys |= keys
        return keys

    def _child(self, value: Any, depth: int) -> set[str]:
        return self._subtree(value, depth + 1) if depth < _KEY_DEPTH else self._flat(value)

    def _flat(self, value: Any) -> set[str]:
        """A deep subtree's values, without recursion (its keys bind nothing)."""
        total: set[str] = set()
        todo = [value]
        while todo:
            v = todo.pop()
            if isinstance(v, dict):
                for key, child in v.items():
                    self.keys.update(self._text_keys(str(key)))
                    todo.append(child)
            elif isinstance(v, list):
                todo.extend(v)
            else:
                total |= self._subtree(v, 0)
        return total

    def _bind(self, key: str, held: set[str]) -> None:
        name = key.casefold()
        if name not in self.under:
            self.under[name] = set(held) if len(held) <= MAX_UNDER else None
            return
        found = self.under[name]
        if found is not None:
            found |= held
            if len(found) > MAX_UNDER:
                self.under[name] = None

    def add_text(self, text: str) -> None:
        """Every value a text result states, each line whole (a quote may give it), and the
        value of each ``key: value`` line bound to its key."""
        self.keys.add(f"q:{text.strip()}")
        for line in text.splitlines():
            self.keys.add(f"q:{line.strip()}")
            key, sep, rest = line.partition(":")
            if sep and key.strip() and rest.strip() and len(key) <= 64:
                self._bind(key.strip(), set(self._text_keys(rest)))
        self.keys.update(self._text_keys(text))

    def _text_keys(self, text: str) -> set[str]:
        """The keys of every value ``text`` states (each distinct token read once)."""
        keys: set[str] = set()
        for m in _NAMED_DATES.finditer(text):
            keys.update(_span(m).keys)
        read = self._read
        for token in text.split():
            found = read.get(token)
            if found is None:
                found = read[token] = _token_keys(token)
            keys.update(found)
        return keys


def _token_keys(token: str) -> tuple[str, ...]:
    """Every key a result's token holds."""
    if token.isalpha():  # a plain word, most of a text: its one key
        return (f"w:{token.casefold()}",)
    core = _strip(token)
    iso = _iso_held(core)
    if iso:
        return tuple(iso)
    keys = [k for s in _classify(core) for k in s.keys]
    # an id's words are words the result holds ("reservation_id": "reservation", "id")
    if any(not c.isalnum() for c in core):
        keys += [f"w:{w.casefold()}" for w in _WORDS.findall(core.replace("_", " "))]
    for piece in _DASHES.split(core):
        keys += _iso_held(piece)
    return tuple(keys)


def held_by(results: Iterable[bytes | None], names: Iterable[str] = ()) -> Held:
    """What the results hold together (a value is held when one of them holds it; ``None``
    or binary bytes hold nothing)."""
    from vigente.runtime.artifact_memory import parse_exact

    held = Held(names)
    for data in results:
        if data is None:
            continue
        parsed = parse_exact(data)
        if parsed is not None:
            held.add_json(parsed[0])
            continue
        try:
            held.add_text(data.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return held


#: Unsupported values named at most (one is enough to make a claim; the rest are counted).
MAX_NAMED = 50


def unsupported(text: str, held: Held) -> list[dict[str, str]]:
    """The values ``text`` states that ``held`` does not hold, each once, in order:
    ``{"kind", "value", "reason"}`` — the first :data:`MAX_NAMED`, then one ``{"kind":
    "more"}`` entry (the reading stops there: a hostile text costs no more)."""
    out: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    named: str | None = None  # the key the summary just named ("balance 10": "balance")
    for value in stated(text):
        after, named = named, None
        if value.kind == "currency":
            named = after  # "balance $10": the amount still follows its key
        elif value.kind in ("word", "name", "code") and value.text.casefold() in held.under:
            named = value.text
        if held.holds(value) and not (value.kind in _NUMERIC and after is not None
                                      and not held.holds_under(after, value)):
            continue
        if (value.kind, value.text) in seen:
            continue
        if len(out) == MAX_NAMED:
            out.append({"kind": "more", "value": "…",
                        "reason": f"more values no cited result holds (the first {MAX_NAMED} "
                                  "are named)"})
            break
        seen.add((value.kind, value.text))
        if held.holds(value):  # held, but not where the summary says
            out.append({"kind": value.kind, "value": value.text,
                        "reason": f"the cited results hold the {value.kind} {value.text!r}, "
                                  f"but not under {after!r}"})
            continue
        reason = f"no cited result holds the {value.kind} {value.text!r}"
        if value.note:
            reason += f": it {value.note} and no cited result holds this text"
        out.append({"kind": value.kind, "value": value.text, "reason": reason})
    return out

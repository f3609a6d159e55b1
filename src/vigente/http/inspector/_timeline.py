"""The geometry of a lineage's timeline: each snapshot a rectangle on both axes.

Valid time runs across (``[valid_from, valid_to)``), knowledge time up (``[known_from,
known_to)``); an open end reaches the plot's edge and is drawn as such. This module only places
what the store returned: which snapshots are admitted at ``(t, k)`` comes from the evidence.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Axis", "Box", "Timeline", "layout"]

WIDTH = 860
HEIGHT = 380
LEFT, RIGHT, TOP, BOTTOM = 96, 24, 16, 64
_DAY = 86_400_000_000
_PALETTE = ("#3b6ea5", "#b5562f", "#4f8a3c", "#8a4f9e", "#a38a1f", "#2f8f8f", "#9e4f6b")


@dataclass(frozen=True, slots=True)
class Box:
    """One snapshot: its rectangle (pixels) and what it says."""

    snapshot_id: str
    label: str
    source: str
    x: float
    y: float
    width: float
    height: float
    colour: str
    open_valid: bool
    open_known: bool
    admitted: bool
    title: str


@dataclass(frozen=True, slots=True)
class Tick:
    at: float
    text: str


@dataclass(frozen=True, slots=True)
class Axis:
    """A time axis: its range in microseconds, the ticks at the dates that matter, and its
    stops (instant, pixel), between which the scale is linear: the dates where a snapshot
    starts or ends are evenly spaced, so that a busy month is as readable as a quiet year."""

    start: int
    end: int
    ticks: tuple[Tick, ...]
    stops: tuple[tuple[int, float], ...]

    @property
    def instants(self) -> str:
        return ",".join(str(i) for i, _ in self.stops)

    @property
    def pixels(self) -> str:
        return ",".join(str(p) for _, p in self.stops)


@dataclass(frozen=True, slots=True)
class Timeline:
    width: int
    height: int
    left: int
    top: int
    plot_width: int
    plot_height: int
    valid: Axis
    known: Axis
    boxes: tuple[Box, ...]
    point: tuple[float, float] | None
    legend: tuple[tuple[str, str], ...]


def _day_text(micros: int) -> str:
    return (dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros)).date().isoformat()


def _ticks(marks: Sequence[int], scale: Callable[[int], float], *, gap: float) -> tuple[Tick, ...]:
    """Ticks at the given instants, dropping one that would overlap the previous label."""
    ticks: list[Tick] = []
    for m in sorted(set(marks)):
        at = scale(m)
        if ticks and abs(at - ticks[-1].at) < gap:
            continue
        ticks.append(Tick(round(at, 1), _day_text(m)))
    return tuple(ticks)


@dataclass(frozen=True, slots=True)
class Span:
    """A snapshot as the layout needs it (instants in microseconds; ``None`` = open end)."""

    snapshot_id: str
    label: str
    source: str
    valid_from: int
    valid_to: int | None
    known_from: int
    known_to: int | None
    title: str


def _stops(marks: Sequence[int], pixel0: float, length: float) -> list[tuple[int, float]]:
    """Evenly spaced stops at the distinct ``marks``, half a step of room before the first
    and a whole step after the last (where open ends run out)."""
    distinct = sorted(set(marks))
    step = max((distinct[-1] - distinct[0]) // max(len(distinct) - 1, 1), 30 * _DAY)
    instants = [distinct[0] - step // 2, *distinct, distinct[-1] + step]
    gap = length / (len(instants) - 1)
    return [(m, round(pixel0 + i * gap, 2)) for i, m in enumerate(instants)]


def _scale(stops: Sequence[tuple[int, float]]) -> Callable[[int], float]:
    """The pixel of an instant: linear between two stops, clamped to the first and last."""

    def at(m: int) -> float:
        if m <= stops[0][0]:
            return stops[0][1]
        for (a, pa), (b, pb) in zip(stops, stops[1:], strict=False):
            if m <= b:
                return pa + (m - a) / (b - a) * (pb - pa)
        return stops[-1][1]

    return at


def layout(
    spans: Sequence[Span],
    *,
    point: tuple[int, int] | None,
    now: int,
    admitted: frozenset[str] = frozenset(),
) -> Timeline:
    """Place ``spans`` on both axes; ``point`` is the picked ``(t, k)``."""
    v_marks = [s.valid_from for s in spans] + [s.valid_to for s in spans if s.valid_to is not None]
    k_marks = [s.known_from for s in spans] + [s.known_to for s in spans if s.known_to is not None]
    k_marks.append(now)
    if not v_marks:
        v_marks = [now]
    # a point outside the dates drawn widens the axis to it (inside, it does not move them)
    if point is not None:
        if not min(v_marks) <= point[0] <= max(v_marks):
            v_marks.append(point[0])
        if not min(k_marks) <= point[1] <= max(k_marks):
            k_marks.append(point[1])
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    v_stops = _stops(v_marks, LEFT, pw)
    k_stops = [(m, round(2 * TOP + ph - p, 2)) for m, p in _stops(k_marks, TOP, ph)]  # up
    sx, sy = _scale(v_stops), _scale(k_stops)
    v1, k1 = v_stops[-1][0], k_stops[-1][0]

    colours: dict[str, str] = {}
    boxes = []
    for s in spans:
        colour = colours.setdefault(s.label, _PALETTE[len(colours) % len(_PALETTE)])
        x0, x1 = sx(s.valid_from), sx(v1 if s.valid_to is None else s.valid_to)
        y_bottom, y_top = sy(s.known_from), sy(k1 if s.known_to is None else s.known_to)
        boxes.append(
            Box(
                s.snapshot_id,
                s.label,
                s.source,
                round(x0, 1),
                round(y_top, 1),
                round(max(x1 - x0, 1.0), 1),
                round(max(y_bottom - y_top, 1.0), 1),
                colour,
                s.valid_to is None,
                s.known_to is None,
                s.snapshot_id in admitted,
                s.title,
            )
        )
    return Timeline(
        WIDTH,
        HEIGHT,
        LEFT,
        TOP,
        pw,
        ph,
        Axis(v_stops[0][0], v1, _ticks(v_marks, sx, gap=64), tuple(v_stops)),
        Axis(k_stops[0][0], k1, _ticks(k_marks, sy, gap=14), tuple(k_stops)),
        tuple(boxes),
        None if point is None else (round(sx(point[0]), 1), round(sy(point[1]), 1)),
        tuple(colours.items()),
    )

"""Boards: ranks where noise cannot order people, one page of them, and your position.

A student's rank is 1 + the number of students clearly ahead: a higher score, or, between
full scores, a ratio interval wholly below theirs. Overlapping intervals so share a rank
(shown "=3"), and the rank needs no chain of comparisons that noise could reorder.
"""
from __future__ import annotations

import bisect
import math
from collections import Counter
from dataclasses import dataclass

from django.db.models import F, Sum
from django.db.models.functions import Coalesce

from accounts.models import User
from catalog.models import Exercise
from courses.models import Course, ItemScore, Membership
from leaderboards.models import Entry
from leaderboards.services import FULL_SCORE

PAGE_SIZE = 50
ROW_FIELDS = ("user_id", "score", "ratio", "ratio_low", "ratio_high", "achieved_at",
              "user__pseudonym", "user__username", "user__first_name", "user__last_name")


@dataclass
class Row:
    rank: int
    shared: bool
    user_id: int
    name: str
    real_name: str
    score: float
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    is_you: bool = False

    @property
    def rank_label(self) -> str:
        return f"={self.rank}" if self.shared else str(self.rank)


@dataclass
class Board:
    rows: list[Row]  # this page
    total: int
    page: int
    pages: int
    you: Row | None
    your_page: int | None


def _ranks(keys: list[tuple[float, float, float]]) -> list[int]:
    """keys: (score, low, high) in board order. Rank = 1 + those clearly ahead."""
    scores_desc = sorted((-score for score, _, _ in keys))
    full_highs = sorted(high for score, _, high in keys if score >= FULL_SCORE)
    ranks = []
    for score, low, high in keys:
        ahead = bisect.bisect_left(scores_desc, -score)  # strictly higher scores
        if score >= FULL_SCORE:
            ahead += bisect.bisect_left(full_highs, low)  # full scores whose interval ends below ours
        ranks.append(ahead + 1)
    return ranks


def _board(raw: list[tuple], *, viewer: User, page: int, real_names: bool) -> Board:
    """raw: ROW_FIELDS tuples in board order."""
    keys = [(r[1], r[3] if r[3] is not None else 0.0, r[4] if r[4] is not None else math.inf) for r in raw]
    ranks = _ranks(keys)
    counts = Counter(ranks)

    def row(i: int) -> Row:
        user_id, score, ratio, low, high, _at, pseudonym, username, first, last = raw[i]
        real = f"{first} {last}".strip() or username
        return Row(ranks[i], counts[ranks[i]] > 1, user_id, pseudonym, real if real_names else "", score,
                   ratio, low, high, is_you=user_id == viewer.id)

    pages = max(1, math.ceil(len(raw) / PAGE_SIZE))
    page = min(max(1, page), pages)
    start = (page - 1) * PAGE_SIZE
    rows = [row(i) for i in range(start, min(start + PAGE_SIZE, len(raw)))]
    mine = next((i for i, r in enumerate(raw) if r[0] == viewer.id), None)
    return Board(rows, len(raw), page, pages, row(mine) if mine is not None else None,
                 mine // PAGE_SIZE + 1 if mine is not None else None)


def exercise_board(exercise: Exercise, *, viewer: User, page: int = 1, course: Course | None = None,
                   real_names: bool = False) -> Board:
    """The exercise's board (site-wide, or among a course's students): one query for the rows."""
    entries = Entry.objects.filter(exercise_version_id=exercise.current_version_id)
    if course is None:
        entries = entries.filter(user__hide_from_public_boards=False) | entries.filter(user_id=viewer.id)
    else:
        entries = entries.filter(user__memberships__course=course, user__memberships__role=Membership.Role.STUDENT)
    raw = list(entries.order_by("-score", F("ratio").asc(nulls_last=True), "achieved_at", "user_id")
               .values_list(*ROW_FIELDS))
    return _board(raw, viewer=viewer, page=page, real_names=real_names)


def course_board(course: Course, *, viewer: User, page: int = 1, real_names: bool = False) -> Board:
    """Students by total points over the course's items; equal totals share a rank."""
    totals = (ItemScore.objects.filter(item__assignment__course=course, user__memberships__course=course,
                                       user__memberships__role=Membership.Role.STUDENT)
              .values("user_id").annotate(total=Sum(Coalesce("override_points", "points"))))
    total_of = {t["user_id"]: t["total"] or 0.0 for t in totals}
    students = User.objects.filter(memberships__course=course, memberships__role=Membership.Role.STUDENT).values_list(
        "id", "pseudonym", "username", "first_name", "last_name")
    raw = sorted(((uid, total_of.get(uid, 0.0), None, None, None, None, p, u, f, la) for uid, p, u, f, la in students),
                 key=lambda r: (-r[1], r[0]))
    # Totals are exact and (score, 0, inf) keys never overlap-share: equal totals share a rank.
    return _board(raw, viewer=viewer, page=page, real_names=real_names)


def stale_progress(exercise: Exercise) -> tuple[int, int]:
    """(entries on the current version, all entries): how far a version change's regrade is."""
    entries = Entry.objects.filter(exercise=exercise)
    return entries.filter(exercise_version_id=exercise.current_version_id).count(), entries.count()

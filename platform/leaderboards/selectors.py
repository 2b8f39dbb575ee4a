"""Boards: ranks where noise cannot order people, one page of them, and your position.

A student's rank is 1 + the number of students clearly ahead: a higher score, or, between
full scores, someone whose interval would not overlap theirs if theirs were as wide as that
someone's own: A is ahead of B when B's ratio (a median) lies beyond A's reach, A's high
end stretched by A's upper half-width again (reach()). B's own interval takes no part, so
width never buys a place: a wide interval only puts its holder ahead of fewer people (red
team round 3: code slow on most inputs had a low end far below its median, which the old
rule, A's high end below B's low end, let shield it). For two entries measured alike it is
the old overlap rule. Entries that no one separates share a rank (shown "=3"), and no chain
of comparisons that noise could reorder decides it. Full scores are listed by their ratio,
then by when their best came in; since a rank only grows with the ratio, ranks never
decrease down the page.

A board reads a score histogram and the ratios and high ends of the full scores (one small
aggregate query), then only the rows of the page shown: its cost grows with the page, not
with the number of entries or submissions.
"""

from __future__ import annotations

import bisect
import hashlib
import math
from dataclasses import dataclass
from datetime import UTC, datetime

from django.contrib.postgres.aggregates import ArrayAgg
from django.db import connection
from django.db.models import (
    CharField,
    Count,
    ExpressionWrapper,
    F,
    FloatField,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import MD5, Cast, Coalesce, Concat, Greatest
from django.utils.crypto import salted_hmac

from accounts.models import User
from catalog.models import Exercise
from courses.models import Course, ItemScore, Membership
from courses.selectors import student_ids
from grader.host.performance import interval_text, overall_ratio, ratio_text
from grading.models import Submission
from leaderboards.board_cache import ranking_get, ranking_set
from leaderboards.models import FULL_SCORE, Entry, Verification
from workbench.selectors import exercise_entries

PAGE_SIZE = 50
# Ties end with when the best came in, then a salt of the board's own: never the user id or
# the entry's id, which follow sign-up and roster order and would line pseudonyms up with
# names (issue 24).
BOARD_ORDER = ("-score", F("ratio").asc(nulls_last=True), "achieved_at")
ROW_FIELDS = (
    "user_id",
    "score",
    "ratio",
    "ratio_low",
    "ratio_high",
    "board_name",
    "user__username",
    "user__first_name",
    "user__last_name",
    "verification_id",
    "pool",
)


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
    verified: bool = False  # measured again in the board's latest re-measuring of its top
    gradings: int = 1  # measurements of this code pooled into its numbers (leaderboards.services.pooled)

    @property
    def rank_label(self) -> str:
        return f"={self.rank}" if self.shared else str(self.rank)

    # Numbers formatted here, not by template filters: floatformat costs a Decimal per call,
    # and a board page has hundreds of numbers (the page is polled every few seconds).
    @property
    def percent(self) -> str:
        return str(round(self.score * 100))

    @property
    def points(self) -> str:
        text = f"{self.score:.2f}"
        return text[:-3] if text.endswith(".00") else text

    @property
    def ratio_text(self) -> str:
        return ratio_text(self.ratio)

    @property
    def low_text(self) -> str:
        return ratio_text(self.low)

    @property
    def high_text(self) -> str:
        return ratio_text(self.high)

    @property
    def speed_text(self) -> str:
        """ "0.98× (0.85–1.1)", as the verdict page prints a grading's."""
        return interval_text(self.ratio, self.low, self.high)


@dataclass(frozen=True)
class VerifiedTop:
    """The board's latest re-measuring of its top: when, and how many were measured."""

    at: datetime
    measured: int


@dataclass
class Board:
    rows: list[Row]  # this page
    total: int
    page: int
    pages: int
    you: Row | None
    your_page: int | None
    verified: VerifiedTop | None = None
    you_withdrawn: bool = False  # the viewer's entry is off the ranking (a re-measurement failed it)


def reach(ratio: float, high: float) -> float:
    """The ratio beyond which an entry with this ratio and high end is clearly ahead: its
    interval's upper half added once more (in log terms), as if the other entry's interval
    were as wide as this one's and the two did not overlap. REACH_SQL is the same arithmetic."""
    top = max(high, ratio)  # never short of its own ratio, or an entry would be ahead of itself
    return top * (top / ratio) if ratio > 0 else top


# reach() in SQL (IEEE doubles both: the same numbers), so that the ranking's query returns
# plain arrays of numbers; ratio > 0 is in the query's filter (overall_ratio stores no other).
_TOP = Greatest(F("ratio_high"), F("ratio"))
REACH_SQL = ExpressionWrapper(_TOP * (_TOP / F("ratio")), output_field=FloatField())


class Ranking:
    """Ranks from a score histogram and the ratios and reaches of the full scores."""

    def __init__(self, histogram: dict[float, int], ratios: list[float], reaches: list[float]):
        self.histogram = histogram
        self.scores = sorted(histogram, reverse=True)
        self.ratios, self.reaches = sorted(ratios), sorted(reaches)
        self.total = sum(histogram.values())

    @classmethod
    def of(cls, histogram: dict[float, int], timed: list[tuple[float, float]]) -> Ranking:
        """From the (ratio, high end) of every timed full score."""
        return cls(histogram, [ratio for ratio, _ in timed], [reach(ratio, high) for ratio, high in timed])

    def with_entry(self, score: float, ratio: float | None, high: float | None) -> Ranking:
        """This ranking with one more entry (a student who hides, on their own board)."""
        histogram = dict(self.histogram)
        histogram[score] = histogram.get(score, 0) + 1
        if score >= FULL_SCORE and ratio is not None and high is not None:
            return Ranking(histogram, [*self.ratios, ratio], [*self.reaches, reach(ratio, high)])
        return Ranking(histogram, self.ratios, self.reaches)

    def higher(self, score: float) -> int:
        return sum(n for s, n in self.histogram.items() if s > score)

    def rank(self, score: float, ratio: float | None) -> tuple[int, bool]:
        """(rank, shared) of an entry with this score and (at a full score) this median ratio."""
        ahead = self.higher(score)
        if score < FULL_SCORE:
            return ahead + 1, self.histogram.get(score, 0) > 1
        if ratio is None:
            # A full score without a ratio comes after every timed one, as the board lists it:
            # on an exercise with speed cases that is an entry whose re-measurement failed
            # (leaderboards.verification), which must not share the first place.
            return ahead + len(self.ratios) + 1, self._untimed_shared()
        below = bisect.bisect_left(self.reaches, ratio)  # full scores whose reach ends below our ratio
        # Everyone whose ratio falls in the same gap between two reaches has this rank.
        floor = self.reaches[below - 1] if below else -math.inf
        ceiling = self.reaches[below] if below < len(self.reaches) else math.inf
        same = bisect.bisect_right(self.ratios, ceiling) - bisect.bisect_right(self.ratios, floor)
        return ahead + below + 1, same > 1

    def _untimed_shared(self) -> bool:
        return sum(n for s, n in self.histogram.items() if s >= FULL_SCORE) - len(self.ratios) > 1

    def position(self, score: float, ratio: float | None) -> int:
        """0-based place in board order (ties between equal keys aside)."""
        ahead = self.higher(score)
        if score >= FULL_SCORE:
            ahead += bisect.bisect_left(self.ratios, ratio) if ratio is not None else len(self.ratios)
        return ahead


def board_salt(board: str) -> str:
    """A secret per board (derived from SECRET_KEY): orders its remaining ties, the same on
    every read, unrelated to anyone's id, and different from one board to the next."""
    return salted_hmac("graphdojo.leaderboards.tiebreak", board).hexdigest()[:16]


def tiebreak(salt: str, user_id: int) -> str:
    """The key a tie is ordered by; the same as the SQL of tiebreak_sql()."""
    return hashlib.md5(f"{salt}{user_id}".encode()).hexdigest()


def tiebreak_sql(salt: str) -> MD5:
    return MD5(Concat(Value(salt), Cast("user_id", CharField())))


def ranked(version_id: int | None) -> QuerySet[Entry]:
    """The entries a board of this version ranks: not those withdrawn after a failed re-measurement,
    nor those an instructor holds for review (a similarity report)."""
    return Entry.objects.filter(exercise_version_id=version_id, withdrawn_at__isnull=True, held_at__isnull=True)


def _row(values: tuple, ranking: Ranking, viewer: User, real_names: bool, batch: int | None) -> Row:
    user_id, score, ratio, low, high, pseudonym, username, first, last, verification_id, pool = values
    rank, shared = ranking.rank(score, ratio)
    real = f"{first} {last}".strip() or username
    return Row(
        rank,
        shared,
        user_id,
        pseudonym,
        real if real_names else "",
        score,
        ratio,
        low,
        high,
        is_you=user_id == viewer.id,
        verified=batch is not None and verification_id == batch,
        # A re-measured entry shows that one session's numbers (its pool keeps them as one more draw).
        gradings=max(1, len(pool or [])) if verification_id is None else 1,
    )


def _ranking(entries: QuerySet[Entry]) -> Ranking:
    """The score histogram and the ratios and high ends of the full scores.

    On PostgreSQL one scan of the board's index alone returns both (COUNT(*), the ratios and
    the reaches read nothing the index does not hold), the ratios and reaches as two arrays
    per score, sorted here (cheaper than two ordered aggregates): a board of 20 000 entries
    costs one query and no per-row model objects.
    """
    timed = Q(score__gte=FULL_SCORE, ratio__gt=0, ratio_high__isnull=False)
    if connection.vendor != "postgresql":
        counts = dict(entries.order_by().values_list("score").annotate(n=Count("id")))
        ends = entries.filter(timed).values_list("ratio", "ratio_high")
        return Ranking.of(counts, [(ratio, high) for ratio, high in ends if ratio is not None and high is not None])
    groups = (
        entries.order_by()
        .values("score")
        .annotate(
            n=Count("*"),
            ratios=ArrayAgg("ratio", filter=timed),
            reaches=ArrayAgg(REACH_SQL, filter=timed),
        )
        .values_list("score", "n", "ratios", "reaches")
    )
    histogram: dict[float, int] = {}
    ratios: list[float] = []
    reaches: list[float] = []
    for score, n, group_ratios, group_reaches in groups:
        histogram[score] = n
        ratios += group_ratios or []
        reaches += group_reaches or []
    return Ranking(histogram, ratios, reaches)


def site_ranking(version_id: int, viewer: User) -> Ranking:
    """The site-wide board's ranking, from the cache when no entry changed since (board_cache)."""
    ranking = ranking_get(version_id)
    if ranking is None:
        hidden = User.objects.filter(hide_from_public_boards=True).values("id")
        ranking = _ranking(ranked(version_id).exclude(user_id__in=hidden))
        ranking_set(version_id, ranking)
    if viewer.hide_from_public_boards:  # they see themselves on the board the others do not
        mine = (
            ranked(version_id).filter(user_id=viewer.id)
            .values_list("score", "ratio", "ratio_high")
            .first()
        )
        if mine is not None:
            ranking = ranking.with_entry(*mine)
    return ranking


def _board(
    entries: QuerySet[Entry],
    *,
    salt: str,
    viewer: User,
    page: int,
    real_names: bool,
    version_id: int | None = None,
    ranking: Ranking | None = None,
) -> Board:
    ranking = ranking or _ranking(entries)
    pages = max(1, math.ceil(ranking.total / PAGE_SIZE))
    page = min(max(1, page), pages)
    start = (page - 1) * PAGE_SIZE
    latest = (
        Verification.objects.filter(exercise_version_id=version_id, status=Verification.Status.DONE)
        .order_by("-finished_at", "-id")
        .values_list("id", "finished_at", "candidates")
        .first()
        if version_id is not None
        else None
    )
    batch = latest[0] if latest else None
    ordered = entries.order_by(*BOARD_ORDER, tiebreak_sql(salt))
    page_values = ordered.values_list(*ROW_FIELDS)[start : start + PAGE_SIZE]
    rows = [_row(v, ranking, viewer, real_names, batch) for v in page_values]
    you = next((r for r in rows if r.is_you), None)
    your_page = page if you else None
    if you is None:
        mine = entries.filter(user_id=viewer.id).values_list(*ROW_FIELDS).first()
        if mine is not None:
            you = _row(mine, ranking, viewer, real_names, batch)
            your_page = ranking.position(you.score, you.ratio) // PAGE_SIZE + 1
    verified = (
        VerifiedTop(latest[1], sum(1 for c in latest[2] if c.get("stored"))) if latest and latest[1] else None
    )
    return Board(rows, ranking.total, page, pages, you, your_page, verified)


def exercise_board(
    exercise: Exercise, *, viewer: User, page: int = 1, course: Course | None = None, real_names: bool = False
) -> Board:
    """The exercise's board, site-wide (without those who hide) or among a course's students
    (under their names in that course)."""
    entries = ranked(exercise.current_version_id)
    version_id = exercise.current_version_id
    ranking = None
    if course is None:
        # Few hide, so excluding their ids keeps the board's index usable (a join would not).
        hidden = User.objects.filter(hide_from_public_boards=True).exclude(id=viewer.id).values("id")
        entries = entries.exclude(user_id__in=hidden).annotate(board_name=F("user__pseudonym"))
        ranking = site_ranking(version_id, viewer) if version_id is not None else None
        salt = board_salt(f"exercise:{exercise.pk}")
    else:
        entries = entries.filter(user_id__in=student_ids(course)).annotate(
            board_name=Subquery(
                Membership.objects.filter(course=course, user_id=OuterRef("user_id")).values("pseudonym")[:1]
            )
        )
        salt = board_salt(f"course:{course.pk}:exercise:{exercise.pk}")
    board = _board(
        entries, salt=salt, viewer=viewer, page=page, real_names=real_names, version_id=version_id, ranking=ranking
    )
    board.you_withdrawn = board.you is None and Entry.objects.filter(
        exercise_version_id=version_id, user_id=viewer.id, withdrawn_at__isnull=False
    ).exists()
    return board


def course_board(course: Course, *, viewer: User, page: int = 1, real_names: bool = False) -> Board:
    """Students by total points over the course's items; equal totals share a rank."""
    totals: dict[int, tuple[float, datetime | None]] = {
        user_id: (total or 0.0, reached)
        for user_id, total, reached in ItemScore.objects.filter(item__assignment__course=course)
        .values_list("user_id")
        .annotate(
            total=Sum(Coalesce("override_points", "points")),
            # When the counted work came in (a quiz or interview: when it was recorded).
            reached=Max(Coalesce("submission__created_at", "updated_at")),
        )
        .values_list("user_id", "total", "reached")
        .order_by()
    }
    students = course.memberships.filter(role=Membership.Role.STUDENT).values_list(
        "user_id", "pseudonym", "user__username", "user__first_name", "user__last_name"
    )
    salt = board_salt(f"course:{course.pk}")
    never = datetime.max.replace(tzinfo=UTC)

    def standing(uid: int) -> tuple[float, datetime]:
        total, reached = totals.get(uid, (0.0, None))
        return total, reached or never

    raw = sorted(
        ((uid, standing(uid)[0], None, None, None, p, u, f, la) for uid, p, u, f, la in students),
        key=lambda r: (-r[1], standing(r[0])[1], tiebreak(salt, r[0])),
    )
    histogram: dict[float, int] = {}
    for r in raw:
        histogram[r[1]] = histogram.get(r[1], 0) + 1
    # Points are exact: rank by total alone (no intervals), equal totals share.
    ranking = Ranking(histogram, [], [])
    pages = max(1, math.ceil(len(raw) / PAGE_SIZE))
    page = min(max(1, page), pages)
    start = (page - 1) * PAGE_SIZE

    def row(values: tuple) -> Row:
        user_id, total, *_rest, pseudonym, username, first, last = values
        rank = ranking.higher(total) + 1
        real = f"{first} {last}".strip() or username
        return Row(
            rank,
            histogram[total] > 1,
            user_id,
            pseudonym,
            real if real_names else "",
            total,
            is_you=user_id == viewer.id,
        )

    rows = [row(r) for r in raw[start : start + PAGE_SIZE]]
    mine = next((i for i, r in enumerate(raw) if r[0] == viewer.id), None)
    return Board(
        rows,
        len(raw),
        page,
        pages,
        row(raw[mine]) if mine is not None else None,
        mine // PAGE_SIZE + 1 if mine is not None else None,
    )


def stale_progress(exercise: Exercise) -> tuple[int, int]:
    """(entries on the current version, all entries): how far a version change's regrade is."""
    entries = Entry.objects.filter(exercise=exercise)
    return entries.filter(exercise_version_id=exercise.current_version_id).count(), entries.count()


@dataclass(frozen=True)
class BoardLink:
    """One exercise's board as the boards' index lists it."""

    exercise: Exercise
    title: str
    difficulty: str
    state: str  # solved, attempted or new, for the viewer
    total: int
    your_rank: str  # "" when the viewer has no entry


def board_index(viewer: User) -> list[BoardLink]:
    """Every published exercise's site-wide board in the suggested order, with its size and
    the viewer's rank; one cached ranking per board, so the page costs a query per exercise."""
    scores = {
        version_id: (score, ratio)
        for version_id, score, ratio in Entry.objects.filter(user_id=viewer.id, withdrawn_at__isnull=True).values_list(
            "exercise_version_id", "score", "ratio"
        )
    }
    links = []
    for entry in exercise_entries(viewer):
        ranking = site_ranking(entry.version.id, viewer)
        rank = ""
        if entry.version.id in scores:
            number, shared = ranking.rank(*scores[entry.version.id])
            rank = f"={number}" if shared else str(number)
        links.append(
            BoardLink(entry.exercise, entry.version.title, entry.version.difficulty, entry.state, ranking.total, rank)
        )
    return links


@dataclass(frozen=True)
class SpeedAmongAccepted:
    """Where one submission's speed falls among the accepted solutions on the board."""

    others: int  # accepted, timed entries of other students
    faster_than: int  # percent of them slower than this submission
    bars: list[tuple[int, bool]]  # a histogram of their ratios: (height in percent, holds yours)


def speed_among_accepted(submission: Submission, bins: int = 12) -> SpeedAmongAccepted | None:
    """Compare a full-score submission's speed (its ratio to the baseline, measured in its own
    run) with every other student's best accepted, timed entry on the exercise's board; None
    when the submission is not accepted or timed nothing."""
    if (submission.score or 0.0) < FULL_SCORE or (mine := overall_ratio(submission.result)) is None:
        return None
    hidden = User.objects.filter(hide_from_public_boards=True).values("id")
    ratios = [
        r
        for r in ranked(submission.exercise_version_id)
        .filter(score__gte=FULL_SCORE, ratio__isnull=False)
        .exclude(user_id=submission.user_id)
        .exclude(user_id__in=hidden)
        .values_list("ratio", flat=True)
        if r is not None and r > 0
    ]
    ratio = mine[0]
    if not ratios:
        return SpeedAmongAccepted(0, 0, [])
    faster_than = round(100 * sum(r > ratio for r in ratios) / len(ratios))
    logs = [math.log(r) for r in ratios]
    lo, hi = min([*logs, math.log(ratio)]), max([*logs, math.log(ratio)])
    width = (hi - lo) / bins or 1.0

    def slot(value: float) -> int:
        return min(bins - 1, int((math.log(value) - lo) / width))

    counts = [0] * bins
    for r in ratios:
        counts[slot(r)] += 1
    top = max(counts)
    return SpeedAmongAccepted(
        len(ratios), faster_than, [(round(100 * c / top), i == slot(ratio)) for i, c in enumerate(counts)]
    )


@dataclass(frozen=True)
class BestAndLatest:
    """The viewer's submission the board ranks (their best) beside their latest graded one."""

    best: Submission | None
    latest: Submission | None


def best_and_latest(exercise: Exercise, viewer: User) -> BestAndLatest | None:
    """None when the viewer has no graded submission on the exercise's current version."""
    graded = Submission.objects.filter(
        user_id=viewer.id, exercise_version_id=exercise.current_version_id, status=Submission.Status.GRADED
    )
    latest = graded.order_by("-created_at", "-id").first()
    if latest is None:
        return None
    entry = Entry.objects.filter(user_id=viewer.id, exercise_version_id=exercise.current_version_id).first()
    best = graded.filter(id=entry.submission_id).first() if entry else None
    return BestAndLatest(best, latest)

"""Reads of the similarity app: reports over the counted submissions of an exercise (the board
entries: each student's best) or of a course assignment (each item's counted submission), and
one pair side by side. Pairs are counted from stored fingerprints at read time, so a report is
never stale and needs no job of its own."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.http import Http404

from accounts.models import User
from catalog.models import Exercise
from courses.models import Assignment, AssignmentItem, Course, ItemScore
from courses.selectors import student_ids
from grading.models import Submission
from leaderboards.models import Entry
from similarity.fingerprints import MIN_PRINTS, THRESHOLD, Print, clusters, matched_lines, pairs, score
from similarity.models import Fingerprint

MAX_PAIRS_LISTED = 200  # best first; a report longer than this is a class-wide problem, not a list


@dataclass
class Side:
    submission_id: int
    user_id: int
    name: str = ""
    entry_id: int | None = None
    held: bool = False


@dataclass
class ReportPair:
    a: Side
    b: Side
    score: float
    shared: int
    url: str = ""  # the pair side by side; the view knows where

    @property
    def percent(self) -> int:
        return round(self.score * 100)


@dataclass
class Section:
    """The report of one exercise: its counted submissions compared two by two."""

    title: str
    exercise_id: int
    compared: int = 0  # counted submissions with fingerprints
    too_short: int = 0  # of those, too short to judge
    waiting: int = 0  # counted submissions whose fingerprints are not computed yet
    pairs: list[ReportPair] = field(default_factory=list)
    more_pairs: int = 0  # above the threshold but not listed
    clusters: list[list[Side]] = field(default_factory=list)
    threshold: float = THRESHOLD

    @property
    def threshold_percent(self) -> int:
        return round(self.threshold * 100)


def _name(user: User) -> str:
    return user.get_full_name() or user.username


def _section(title: str, exercise_id: int, counted: dict[int, int], *, threshold: float) -> Section:
    """``counted``: user id -> their counted submission's id."""
    section = Section(title=title, exercise_id=exercise_id, threshold=threshold)
    owner = {submission_id: user_id for user_id, submission_id in counted.items()}
    docs: dict[int, set[int]] = {}
    for submission_id, prints in Fingerprint.objects.filter(submission_id__in=owner).values_list(
        "submission_id", "prints"
    ):
        docs[submission_id] = {p[0] for p in prints}
    section.waiting = len(owner) - len(docs)
    section.compared = len(docs)
    section.too_short = sum(len(h) < MIN_PRINTS for h in docs.values())
    found = pairs(docs, threshold=threshold)
    listed = found[:MAX_PAIRS_LISTED]
    section.more_pairs = len(found) - len(listed)
    groups = [g for g in clusters(found) if len(g) > 2]
    involved = {p.a for p in listed} | {p.b for p in listed} | {s for g in groups for s in g}
    users = {u.id: u for u in User.objects.filter(id__in={owner[s] for s in involved})}
    entries = {
        user_id: (entry_id, held_at is not None)
        for user_id, entry_id, held_at in Entry.objects.filter(
            exercise_id=exercise_id, user_id__in=users
        ).values_list("user_id", "id", "held_at")
    }

    def side(submission_id: int) -> Side:
        user_id = owner[submission_id]
        entry_id, held = entries.get(user_id, (None, False))
        return Side(submission_id, user_id, _name(users[user_id]), entry_id, held)

    section.pairs = [ReportPair(side(p.a), side(p.b), p.score, p.shared) for p in listed]
    section.clusters = [[side(s) for s in g] for g in groups]
    return section


def exercise_report(exercise: Exercise, *, threshold: float = THRESHOLD) -> Section:
    """Every student's board entry of the exercise (their best code), site-wide."""
    counted = dict(Entry.objects.filter(exercise=exercise).values_list("user_id", "submission_id"))
    version = exercise.current_version
    return _section(version.title if version else exercise.slug, exercise.id, counted, threshold=threshold)


def _exercise_items(assignment: Assignment) -> list[AssignmentItem]:
    return list(
        assignment.items.filter(kind=AssignmentItem.Kind.EXERCISE)
        .select_related("exercise_version")
        .only("id", "position", "exercise_version__id", "exercise_version__exercise_id", "exercise_version__title_en",
              "exercise_version__title_zh")
        .order_by("position", "id")
    )


def assignment_report(course: Course, assignment: Assignment, *, threshold: float = THRESHOLD) -> list[Section]:
    """One section per exercise of the assignment: the counted submission of each student."""
    students = student_ids(course)
    sections = []
    for item in _exercise_items(assignment):
        counted = dict(
            ItemScore.objects.filter(item=item, user_id__in=students, submission__isnull=False).values_list(
                "user_id", "submission_id"
            )
        )
        version = item.exercise_version
        assert version is not None
        sections.append(_section(version.title, version.exercise_id, counted, threshold=threshold))
    return sections


def assignment_counts(course: Course, assignment: Assignment, submission_ids: list[int]) -> bool:
    """Whether every one of ``submission_ids`` is a counted submission of the assignment."""
    counted = set(
        ItemScore.objects.filter(
            item__assignment=assignment, user_id__in=student_ids(course), submission_id__in=submission_ids
        ).values_list("submission_id", flat=True)
    )
    return counted == set(submission_ids)


@dataclass
class Line:
    number: int
    text: str
    matched: bool


@dataclass
class PairDetail:
    a: Side
    b: Side
    lines_a: list[Line]
    lines_b: list[Line]
    score: float
    shared: int

    @property
    def percent(self) -> int:
        return round(self.score * 100)


def pair_detail(first_id: int, second_id: int, *, exercise_id: int) -> PairDetail:
    """Two submissions of one exercise side by side, the lines of their shared fingerprints marked;
    404 unless both are of the exercise and fingerprinted."""
    submissions = {
        s.id: s
        for s in Submission.objects.select_related("user").filter(
            id__in=(first_id, second_id), exercise_version__exercise_id=exercise_id
        )
    }
    stored = dict(Fingerprint.objects.filter(submission_id__in=submissions).values_list("submission_id", "prints"))
    if first_id == second_id or len(stored) != 2:
        raise Http404
    prints = {sid: [Print(*p) for p in stored[sid]] for sid in (first_id, second_id)}
    hashes = {sid: {p.hash for p in prints[sid]} for sid in prints}
    shared = hashes[first_id] & hashes[second_id]
    match = score(hashes[first_id], hashes[second_id])
    entries = {
        user_id: (entry_id, held_at is not None)
        for user_id, entry_id, held_at in Entry.objects.filter(
            exercise_id=exercise_id, user_id__in=[s.user_id for s in submissions.values()]
        ).values_list("user_id", "id", "held_at")
    }

    def side(sid: int) -> tuple[Side, list[Line]]:
        s = submissions[sid]
        marked = matched_lines(prints[sid], shared)
        lines = [Line(n, text, n in marked) for n, text in enumerate(s.code.splitlines(), start=1)]
        entry_id, held = entries.get(s.user_id, (None, False))
        return Side(sid, s.user_id, _name(s.user), entry_id, held), lines

    (a, lines_a), (b, lines_b) = side(first_id), side(second_id)
    return PairDetail(a, b, lines_a, lines_b, match.score, match.shared)

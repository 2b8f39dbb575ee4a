"""Reads for courses. Every page of a course goes through course_for(), which answers 404
to anyone outside it, so one user never learns of another's course."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from django.db.models import Count, F, Prefetch, QuerySet
from django.http import Http404

from accounts.models import User
from courses.models import Assignment, AssignmentItem, Course, Invitation, ItemScore, Membership, RegradeJob
from courses.tokens import invitation_tokens
from grading.models import Submission
from interviews.models import InterviewAttempt
from quizzes.models import QuizAttempt


def memberships_of(user: User) -> QuerySet[Membership]:
    return Membership.objects.filter(user=user).select_related("course").order_by("-course__created_at")


def course_for(
    user: User, course_id: int, *, staff: bool = False, instructor: bool = False
) -> tuple[Course, Membership]:
    """The course and the user's place in it; 404 unless they belong (with the role asked)."""
    membership = Membership.objects.select_related("course").filter(course_id=course_id, user=user).first()
    if membership is None:
        raise Http404
    if instructor and membership.role != Membership.Role.INSTRUCTOR:
        raise Http404
    if staff and not membership.is_staff:
        raise Http404
    return membership.course, membership


def assignments_of(course: Course) -> QuerySet[Assignment]:
    # A version's files and texts are large and no list of items shows them.
    heavy = ("files", "statement_en", "statement_zh", "summary_en", "summary_zh", "starter")
    items = AssignmentItem.objects.select_related("exercise_version__exercise", "bank", "interview").defer(
        *(f"exercise_version__{name}" for name in heavy)
    )
    return course.assignments.prefetch_related(Prefetch("items", queryset=items))


def student_ids(course: Course) -> list[int]:
    """The course's students' ids, read first: filtering by a list of a few hundred ids lets
    PostgreSQL probe indexes where a join would scan every user of the site."""
    return list(course.memberships.filter(role=Membership.Role.STUDENT).values_list("user_id", flat=True))


def students_of(course: Course) -> QuerySet[User]:
    return User.objects.filter(memberships__course=course, memberships__role=Membership.Role.STUDENT).order_by(
        "last_name", "first_name", "username"
    )


def invitations_of(course: Course) -> QuerySet[Invitation]:
    """The course's invitations, who claimed each, waiting ones first."""
    return course.invitations.select_related("claimed_by").order_by(F("claimed_at").asc(nulls_first=True), "email")


def invitation_open(pk: int, token: str) -> Invitation | None:
    """The invitation a link opens: None when the token does not match it, it has expired, or
    it was accepted already (a claim changes what the token is made from)."""
    invitation = Invitation.objects.select_related("course").filter(pk=pk).first()
    if invitation is None or invitation.claimed_at is not None:
        return None
    return invitation if invitation_tokens.check_token(invitation, token) else None


def staff_of(course: Course) -> QuerySet[Membership]:
    return (
        course.memberships.exclude(role=Membership.Role.STUDENT)
        .select_related("user")
        .order_by("role", "user__username")
    )


class Cell(NamedTuple):
    """One gradebook cell: a tuple, not a model (a big course has thousands, many alike)."""

    points: float | None
    override_points: float | None
    days_late: int
    late_refused: int
    attempts: int

    @property
    def effective(self) -> float | None:
        return self.override_points if self.override_points is not None else self.points


class Student(NamedTuple):
    """What the gradebook shows of a student: read as a tuple, not a User model."""

    pk: int
    username: str
    first_name: str
    last_name: str
    email: str

    def get_full_name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip()


@dataclass
class GradebookRow:
    student: Student
    cells: list[Cell | None] = field(default_factory=list)
    total: float = 0.0


@dataclass
class Gradebook:
    assignments: list[Assignment]
    items: list[AssignmentItem]
    rows: list[GradebookRow]
    max_total: int


def gradebook(course: Course) -> Gradebook:
    """Students by assignment items: five queries, whatever the number of submissions."""
    assignments = list(assignments_of(course))
    items = [item for assignment in assignments for item in assignment.items.all()]
    column = {item.id: i for i, item in enumerate(items)}
    students = (
        User.objects.filter(id__in=student_ids(course))
        .order_by("last_name", "first_name", "username")
        .values_list("id", "username", "first_name", "last_name", "email")
    )
    rows = {values[0]: GradebookRow(Student._make(values), [None] * len(items)) for values in students}
    scores = ItemScore.objects.filter(item_id__in=list(column)).values_list(
        "user_id", "item_id", "points", "override_points", "days_late", "late_refused", "attempts"
    )
    for user_id, item_id, points, override, days_late, late_refused, attempts in scores:
        row = rows.get(user_id)
        if row is not None:  # a student who left keeps their scores, off the book
            row.cells[column[item_id]] = Cell(points, override, days_late, late_refused, attempts)
            row.total += (override if override is not None else points) or 0
    return Gradebook(assignments, items, list(rows.values()), sum(item.points for item in items))


@dataclass
class StudentRecord:
    scores: dict[int, ItemScore]
    submissions: list[Submission]
    quiz_attempts: list[QuizAttempt]
    interview_attempts: list[InterviewAttempt]


def student_record(course: Course, student: User, items: list[AssignmentItem]) -> StudentRecord:
    """Everything a student did for the course's items: submissions, quiz and interview attempts."""
    versions = [i.exercise_version_id for i in items if i.exercise_version_id]
    banks = [i.bank_id for i in items if i.bank_id]
    interviews = [i.interview_id for i in items if i.interview_id]
    return StudentRecord(
        scores={s.item_id: s for s in ItemScore.objects.filter(item__in=items, user=student)},
        submissions=list(
            Submission.objects.filter(user=student, exercise_version_id__in=versions).select_related(
                "exercise_version"
            )[:200]
        ),
        quiz_attempts=list(
            QuizAttempt.objects.filter(user=student, bank_id__in=banks)
            .select_related("bank")
            .annotate(answered=Count("items__answered_at"))
        ),
        interview_attempts=list(
            InterviewAttempt.objects.filter(user=student, template_id__in=interviews).select_related("template")
        ),
    )


@dataclass
class JobProgress:
    job: RegradeJob
    done: int

    @property
    def percent(self) -> int:
        return 100 if not self.job.total else round(100 * self.done / self.job.total)

    @property
    def finished(self) -> bool:
        return self.done >= self.job.total


def regrade_progress(job: RegradeJob) -> JobProgress:
    done = Submission.objects.filter(
        id__in=job.submission_ids,
        status__in=[Submission.Status.GRADED, Submission.Status.FAILED],
        finished_at__gte=job.created_at,
    ).count()
    return JobProgress(job, done)

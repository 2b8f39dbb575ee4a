"""Courses, who is in them (students, assistants, instructors), assignments, and each
student's standing on each assignment item, kept current as verdicts and attempts arrive."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from accounts.pseudonyms import pseudonym_generate
from catalog.languages import chinese

JOIN_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I to misread


def join_code_generate() -> str:
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(8))


class Course(models.Model):
    title_en = models.CharField(_("title (English)"), max_length=200)
    title_zh = models.CharField(_("title (Chinese)"), max_length=200)
    term = models.CharField(_("term"), max_length=60, help_text=_("e.g. Spring 2027"))
    join_code = models.CharField(max_length=12, unique=True, default=join_code_generate)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.title_en} ({self.term})"

    @property
    def title(self) -> str:
        return self.title_zh if chinese() else self.title_en


class Membership(models.Model):
    class Role(models.TextChoices):
        INSTRUCTOR = "instructor", _("Instructor")
        ASSISTANT = "assistant", _("Assistant")
        STUDENT = "student", _("Student")

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=12, choices=Role.choices, default=Role.STUDENT)
    joined_at = models.DateTimeField(auto_now_add=True)
    # The name on this course's boards: drawn afresh at enrolment, never the site-wide one, so
    # a course board and the public boards cannot be matched up by name (issue 24).
    pseudonym = models.CharField(_("name on this course's boards"), max_length=40, default=pseudonym_generate)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["course", "user"], name="unique_membership"),
            models.UniqueConstraint(fields=["course", "pseudonym"], name="unique_course_pseudonym"),
        ]
        indexes = [models.Index(fields=["user", "role"]), models.Index(fields=["course", "role"])]

    def __str__(self) -> str:
        return f"{self.user} in {self.course_id} as {self.role}"

    @property
    def is_staff(self) -> bool:
        return self.role in (self.Role.INSTRUCTOR, self.Role.ASSISTANT)


class Invitation(models.Model):
    """A roster row: a place in the course kept for whoever follows the link mailed to its
    address. Nobody is enrolled by a username or an email alone (issue 24: an account that
    took a class's usernames first was enrolled in the students' places)."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    # What the roster said: offered as the new account's name, never matched to an account.
    username = models.CharField(max_length=150, blank=True)
    name = models.CharField(max_length=300, blank=True)
    role = models.CharField(max_length=12, choices=Membership.Role.choices, default=Membership.Role.STUDENT)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["email", "id"]
        constraints = [models.UniqueConstraint(fields=["course", "email"], name="one_invitation_per_address")]

    def __str__(self) -> str:
        return f"{self.email} to {self.course_id}"


class Assignment(models.Model):
    class LatePolicy(models.TextChoices):
        REFUSE = "refuse", _("Late work does not count")
        PENALTY = "penalty", _("Late work loses a share per day")

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="assignments")
    position = models.PositiveSmallIntegerField(default=1)
    title_en = models.CharField(_("title (English)"), max_length=200)
    title_zh = models.CharField(_("title (Chinese)"), max_length=200)
    # Held by the server: what counts is when the server received the work.
    opens_at = models.DateTimeField(_("opens at"))
    due_at = models.DateTimeField(_("due at"))
    late_policy = models.CharField(
        _("late policy"), max_length=10, choices=LatePolicy.choices, default=LatePolicy.REFUSE
    )
    penalty_per_day = models.FloatField(_("penalty per day late (%)"), default=10)

    class Meta:
        ordering = ["course", "position", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(due_at__gt=models.F("opens_at")), name="assignment_due_after_open"),
            models.CheckConstraint(
                condition=Q(penalty_per_day__gte=0, penalty_per_day__lte=100), name="penalty_is_a_share"
            ),
        ]

    def __str__(self) -> str:
        return self.title_en

    @property
    def title(self) -> str:
        return self.title_zh if chinese() else self.title_en


class AssignmentItem(models.Model):
    class Kind(models.TextChoices):
        EXERCISE = "exercise", _("Coding exercise")
        QUIZ = "quiz", _("Quiz")
        INTERVIEW = "interview", _("Mock interview")

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField(default=1)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # The version is pinned: a new version of the exercise changes nothing here until an
    # instructor moves the item to it (which regrades).
    exercise_version = models.ForeignKey(
        "catalog.ExerciseVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    bank = models.ForeignKey("quizzes.Bank", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    interview = models.ForeignKey(
        "interviews.InterviewTemplate", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    points = models.PositiveSmallIntegerField(default=10)

    class Meta:
        ordering = ["assignment", "position", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="exercise", exercise_version__isnull=False, bank__isnull=True, interview__isnull=True)
                | Q(kind="quiz", bank__isnull=False, exercise_version__isnull=True, interview__isnull=True)
                | Q(kind="interview", interview__isnull=False, exercise_version__isnull=True, bank__isnull=True),
                name="item_names_one_thing_of_its_kind",
            )
        ]
        indexes = [
            models.Index(fields=["exercise_version"]),
            models.Index(fields=["bank"]),
            models.Index(fields=["interview"]),
        ]

    def __str__(self) -> str:
        return f"{self.assignment} #{self.position} ({self.kind})"

    @property
    def title(self) -> str:
        target = self.exercise_version or self.bank or self.interview
        assert target is not None, "the item_names_one_thing_of_its_kind constraint keeps one set"
        return target.title


class ItemScore(models.Model):
    """A student's best counted work on one item: updated in the transaction that stores a
    verdict (or closes a quiz or interview), so the gradebook never scans submissions."""

    item = models.ForeignKey(AssignmentItem, on_delete=models.CASCADE, related_name="scores")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    points = models.FloatField(null=True, blank=True, help_text="After any late penalty; None: nothing counted yet")
    days_late = models.PositiveSmallIntegerField(default=0)
    late_refused = models.PositiveIntegerField(default=0, help_text="Late attempts that did not count")
    attempts = models.PositiveIntegerField(default=0)
    submission = models.ForeignKey(
        "grading.Submission", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    override_points = models.FloatField(null=True, blank=True, help_text="Set by a ScoreOverride; wins over points")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "user"], name="unique_item_score")]
        indexes = [models.Index(fields=["user", "item"])]

    @property
    def effective(self) -> float | None:
        return self.override_points if self.override_points is not None else self.points


class ScoreOverride(models.Model):
    """The audit trail of manual scores: who, when, why. The latest one is in ItemScore."""

    item = models.ForeignKey(AssignmentItem, on_delete=models.CASCADE, related_name="overrides")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    points = models.FloatField(null=True, blank=True, help_text="None removes the override")
    reason = models.TextField()
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]


class RegradeJob(models.Model):
    """A batch of submissions sent back to the graders; progress is read from the rows
    themselves (graded again since the job began), so it survives worker restarts."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="regrade_jobs")
    scope = models.CharField(max_length=200)
    submission_ids = models.JSONField(default=list)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    @property
    def total(self) -> int:
        return len(self.submission_ids)

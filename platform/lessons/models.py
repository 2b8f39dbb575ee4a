"""Lessons mirrored from exercises/lessons/, each change a new version; per-student progress;
playground runs (kept to enforce the per-user rate limit)."""
from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from catalog.languages import chinese


class Lesson(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    order = models.PositiveIntegerField(default=0)
    retired = models.BooleanField(default=False)
    current_version = models.ForeignKey("LessonVersion", null=True, blank=True, on_delete=models.PROTECT,
                                        related_name="+")

    class Meta:
        ordering = ["order", "slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def version(self) -> "LessonVersion":
        """The current version; every published lesson has one (``lessons_published()`` asks for it)."""
        if self.current_version is None:
            raise LessonVersion.DoesNotExist(f"lesson {self.slug!r} has no version yet")
        return self.current_version


class LessonVersion(models.Model):
    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    digest = models.CharField(max_length=64)
    title_en = models.CharField(max_length=200)
    title_zh = models.CharField(max_length=200)
    summary_en = models.TextField()
    summary_zh = models.TextField()
    body_en = models.TextField()
    body_zh = models.TextField()
    meta = models.JSONField(help_text="covers, prerequisites, exercises, quiz, topics, interviews, data")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["lesson", "-number"]
        constraints = [models.UniqueConstraint(fields=["lesson", "number"], name="unique_lesson_version")]

    def __str__(self) -> str:
        return f"{self.lesson.slug} v{self.number}"

    @property
    def title(self) -> str:
        return self.title_zh if chinese() else self.title_en

    @property
    def summary(self) -> str:
        return self.summary_zh if chinese() else self.summary_en

    @property
    def body(self) -> str:
        return self.body_zh if chinese() else self.body_en


class LessonProgress(models.Model):
    """A student marked the lesson read; passing its short quiz is read from the quiz attempts."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lesson_progress")
    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="progress")
    read_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "lesson"], name="unique_lesson_progress")]


class PlaygroundRun(models.Model):
    """One run of a visitor's program (the playground, a lesson's code block) or of a compile-flow
    rerun. The web request only stores it QUEUED; a Celery worker runs it in the grading sandbox
    (``lessons.runs``) and stores the result here, which the page polls. Rows also count towards
    the per-user rate limit."""

    class Kind(models.TextChoices):
        PROGRAM = "program"
        COMPILE_FLOW = "flow"

    class State(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Could not run")

    class Failure(models.TextChoices):
        """Why a FAILED run has no result: what the page tells the visitor."""
        UNAVAILABLE = "unavailable"  # the sandbox stayed unavailable through every retry
        LATE = "late"                # no result by the deadline (task lost, worker gone)
        INTERNAL = "internal"        # a bug of ours

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="playground_runs")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.PROGRAM)
    code = models.TextField(blank=True, help_text="the program (or graph program) as the visitor sent it")
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED, db_index=True)
    failure = models.CharField(max_length=12, choices=Failure.choices, blank=True)
    result = models.JSONField(null=True, blank=True, help_text="RunResult.to_dict(), or the compile flow")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Taken by a worker (attempts moves on), its lease renewed while it runs (grading.leases).
    attempts = models.PositiveSmallIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=20, blank=True, help_text="the sandbox's status, for operators")
    wall_s = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} run {self.pk} by {self.user_id} ({self.state})"

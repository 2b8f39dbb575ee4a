from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from grading.results import VERDICT_CHOICES


class Submission(models.Model):
    """Student code for one exercise version, and the verdict it earned."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        # The speed cases did not settle (or were timed by the wall clock on a busy host): the
        # one measure-again is due at measure_again_at. Not finished, and counted nowhere yet.
        MEASURING = "measuring", _("Measuring again")
        GRADED = "graded", _("Graded")
        # The platform failed (not the student) and retries ran out; an operator regrades.
        FAILED = "failed", _("Could not be graded")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions")
    exercise_version = models.ForeignKey(
        "catalog.ExerciseVersion", on_delete=models.PROTECT, related_name="submissions"
    )
    code = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    verdict = models.CharField(max_length=20, blank=True, choices=VERDICT_CHOICES)
    score = models.FloatField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True, help_text="The grader's verdict document")
    attempts = models.PositiveSmallIntegerField(default=0)
    # Sent with the form (one per page load): the same form posted twice is one submission.
    idempotency_key = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the work first reached the server, where that is earlier than created_at: the same
    # code submitted again by the platform (an assignment moved to a new version) keeps the
    # time its student handed it in, so a move never makes work late. None: created_at.
    received_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Renewed by the grading worker while it runs (grading.leases); lapsed: the worker died.
    lease_until = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When its one measure-again is due; set once, so a grading measures again at most once, and
    # a row with it set is graded as the last attempt (the median decides).
    measure_again_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "submissions_submission"  # the model moved here from the submissions app; its rows stayed
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "exercise_version"])]
        constraints = [
            models.UniqueConstraint(fields=["user", "idempotency_key"], condition=~models.Q(idempotency_key=""),
                                    name="one_submission_per_form"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.exercise_version} by {self.user}"

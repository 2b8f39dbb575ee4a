"""A student's best grading per exercise: one row, kept in the transaction that stores each
verdict, so boards read a few thousand small rows instead of a million submissions."""

from django.conf import settings
from django.db import models

FULL_SCORE = 1.0 - 1e-9  # a score this high is full marks (scores are floats)
POOL_SIZE = 32  # gradings of one code pooled: the latest, so a row stays small whatever the history


class Entry(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="board_entries")
    exercise = models.ForeignKey("catalog.Exercise", on_delete=models.CASCADE, related_name="board_entries")
    # Only the exercise's current version counts on a board; an entry of an older one is stale.
    exercise_version = models.ForeignKey("catalog.ExerciseVersion", on_delete=models.CASCADE, related_name="+")
    submission = models.ForeignKey("grading.Submission", on_delete=models.CASCADE, related_name="+")
    code_digest = models.CharField(max_length=64, help_text="Of the normalised code: the same code is the same entry")
    score = models.FloatField()
    # The code's speed as the board ranks it (student / reference; lower is faster): pooled
    # over every counted grading of this code (leaderboards.services.pooled), or the board's
    # latest re-measurement of it; None when the exercise times nothing.
    ratio = models.FloatField(null=True, blank=True)
    ratio_low = models.FloatField(null=True, blank=True)
    ratio_high = models.FloatField(null=True, blank=True)
    # [ratio, low, high] of each counted grading and re-measurement of this code (the latest
    # POOL_SIZE), each the geometric mean of its cases: resubmitting the same code adds a draw
    # to the pool instead of re-drawing the entry (red team round 3).
    pool = models.JSONField(default=list, blank=True)
    achieved_at = models.DateTimeField()
    # Set when the ratio above was re-measured with the rest of the board's top in one
    # session (a Verification); cleared when new code replaces the entry.
    verification = models.ForeignKey(
        "leaderboards.Verification", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    verified_at = models.DateTimeField(null=True, blank=True)
    # Set when a re-measurement of the entry's code did not accept it (wrong, too slow, crashed):
    # the entry is off the ranking until a grading of the student replaces it (entry_record).
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    # Set when an instructor holds the entry for review (a similarity report): off the ranking
    # until released. Kept through new gradings, or resubmitting would lift the hold.
    held_at = models.DateTimeField(null=True, blank=True)
    held_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["exercise", "user"], name="one_entry_per_student_exercise")]
        indexes = [
            # The board, in its order (one version's entries read as an index range); it covers
            # the rank histogram and the ratios and interval ends too, so those read the index alone.
            models.Index(
                fields=["exercise_version", "-score", "ratio", "achieved_at"],
                name="board_order",
                include=["user_id", "ratio_low", "ratio_high", "withdrawn_at", "held_at"],
            ),
            # A course's board: its few hundred students' entries, probed by user.
            models.Index(fields=["user", "exercise_version"], name="entry_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} on {self.exercise_id}: {self.score}"


class Verification(models.Model):
    """One re-measuring of the top of an exercise's board: every candidate's code graded
    again in interleaved rounds in one task, on one sandbox, on the same seed, so that the order at
    the top comes from one measuring session rather than from gradings hours apart.

    Debounced: at most one PENDING batch per version; further requests while it waits join it.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        SUPERSEDED = "superseded"  # the exercise moved to another version before it ran
        FAILED = "failed"  # a fault of ours (logged); the next request measures again

    exercise_version = models.ForeignKey("catalog.ExerciseVersion", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    requested_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Taken by a worker (attempts moves on), its lease renewed while it measures (grading.leases).
    attempts = models.PositiveSmallIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    seed = models.BigIntegerField(null=True, blank=True)
    reversed_order = models.BooleanField(default=False, help_text="Graded from the bottom of the top up")
    # One dict per candidate, in the order graded: entry, user, verdict, the ratio before and after.
    candidates = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["exercise_version"], condition=models.Q(status="pending"), name="one_pending_verification"
            )
        ]
        indexes = [models.Index(fields=["exercise_version", "status", "-finished_at"], name="verification_latest")]

    def __str__(self) -> str:
        return f"verification {self.pk} of {self.exercise_version_id} ({self.status})"

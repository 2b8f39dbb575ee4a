"""A student's best grading per exercise: one row, kept in the transaction that stores each
verdict, so boards read a few thousand small rows instead of a million submissions."""

from django.conf import settings
from django.db import models


class Entry(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="board_entries")
    exercise = models.ForeignKey("catalog.Exercise", on_delete=models.CASCADE, related_name="board_entries")
    # Only the exercise's current version counts on a board; an entry of an older one is stale.
    exercise_version = models.ForeignKey("catalog.ExerciseVersion", on_delete=models.CASCADE, related_name="+")
    submission = models.ForeignKey("grading.Submission", on_delete=models.CASCADE, related_name="+")
    code_digest = models.CharField(max_length=64, help_text="Of the normalised code: the same code is the same entry")
    score = models.FloatField()
    # Geometric mean of the performance cases' median ratios (student / reference; lower is
    # faster) and of their 95 % interval ends; None when the exercise times nothing.
    ratio = models.FloatField(null=True, blank=True)
    ratio_low = models.FloatField(null=True, blank=True)
    ratio_high = models.FloatField(null=True, blank=True)
    achieved_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["exercise", "user"], name="one_entry_per_student_exercise")]
        indexes = [
            # The board: one version's entries in board order, read as an index range.
            # The board, in its order; it covers the rank histogram and interval ends too, so
            # those read the index alone.
            models.Index(
                fields=["exercise_version", "-score", "ratio_low", "ratio", "id"],
                name="board_order",
                include=["user_id", "ratio_high"],
            ),
            # A course's board: its few hundred students' entries, probed by user.
            models.Index(fields=["user", "exercise_version"], name="entry_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} on {self.exercise_id}: {self.score}"

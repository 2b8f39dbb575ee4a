from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Draft(models.Model):
    """What a student last had in the editor for an exercise, kept on the server so it
    follows them between machines and survives a wrong submission."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="drafts")
    exercise = models.ForeignKey("catalog.Exercise", on_delete=models.CASCADE, related_name="drafts")
    code = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "exercise"], name="one_draft_per_exercise")]

    def __str__(self) -> str:
        return f"draft of {self.exercise} by {self.user}"


class PracticeRun(models.Model):
    """The visible checks run on a student's code for quick feedback: never scored, never a
    submission, never on a leaderboard."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Could not run")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="practice_runs")
    exercise_version = models.ForeignKey("catalog.ExerciseVersion", on_delete=models.CASCADE, related_name="+")
    code = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    result = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # Taken by a worker (attempts moves on), its lease renewed while it runs (grading.leases).
    attempts = models.PositiveSmallIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"practice {self.pk} on {self.exercise_version} by {self.user}"


class HintReveal(models.Model):
    """A student asked for the next hint of an exercise (exercise.toml's [[hints]], in order):
    kept so the hints stay shown and an instructor can tell who needed which."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="hint_reveals")
    exercise = models.ForeignKey("catalog.Exercise", on_delete=models.CASCADE, related_name="hint_reveals")
    number = models.PositiveSmallIntegerField(help_text="1 for the first hint")
    exercise_version = models.ForeignKey("catalog.ExerciseVersion", on_delete=models.CASCADE, related_name="+")
    revealed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user", "exercise", "number"]
        constraints = [models.UniqueConstraint(fields=["user", "exercise", "number"], name="one_reveal_per_hint")]

    def __str__(self) -> str:
        return f"hint {self.number} of {self.exercise} for {self.user}"

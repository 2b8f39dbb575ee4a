"""The catalog mirrors exercises/ in the database. Each distinct content of an exercise is
an immutable ExerciseVersion, so a submission is always graded against what its author saw."""
from django.db import models

from catalog.languages import chinese


class Exercise(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    uid = models.CharField(max_length=100, unique=True, help_text="Stable id from exercise.toml")
    current_version = models.ForeignKey(
        "ExerciseVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    retired = models.BooleanField(default=False, help_text="Gone from exercises/: hidden, kept")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class ExerciseVersion(models.Model):
    exercise = models.ForeignKey(Exercise, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField(help_text="1, 2, 3… one per distinct content")
    declared_version = models.PositiveIntegerField(help_text="`version` in exercise.toml")
    digest = models.CharField(max_length=64)
    title_en = models.CharField(max_length=200)
    title_zh = models.CharField(max_length=200)
    summary_en = models.TextField()
    summary_zh = models.TextField()
    statement_en = models.TextField()
    statement_zh = models.TextField()
    starter = models.TextField()
    difficulty = models.CharField(max_length=20)
    tags = models.JSONField(default=list)
    points = models.PositiveIntegerField()
    needs_gpu = models.BooleanField(default=False)
    # Every file of the exercise folder (relative path -> text), hidden ones included: the
    # worker rebuilds the folder from here, so old versions stay gradable after edits.
    files = models.JSONField()
    # name -> {language: title} of each check whose decorator gives one, stored at publish so
    # that verdict pages name checks without reading checks.py.
    check_titles = models.JSONField(default=dict, blank=True)
    # The exercise spec as validated at publish (grader.host.stored_spec): gradings read it and
    # never validate again. None for a version the migration could not load (loaded when graded).
    spec = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["exercise", "number"]
        constraints = [
            models.UniqueConstraint(fields=["exercise", "number"], name="unique_version_number"),
            models.UniqueConstraint(fields=["exercise", "digest"], name="unique_version_digest"),
        ]

    def __str__(self) -> str:
        return f"{self.exercise.slug} v{self.number}"

    def _localized(self, field: str) -> str:
        return getattr(self, f"{field}_zh" if chinese() else f"{field}_en")

    @property
    def title(self) -> str:
        return self._localized("title")

    @property
    def summary(self) -> str:
        return self._localized("summary")

    @property
    def statement(self) -> str:
        return self._localized("statement")


class ExerciseUpload(models.Model):
    """An exercise folder an instructor uploaded as a zip: validated like files in git, then published."""

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        VALIDATING = "validating", "validating"
        VALID = "valid", "valid"
        INVALID = "invalid", "invalid"
        PUBLISHED = "published", "published"

    uploaded_by = models.ForeignKey("accounts.User", on_delete=models.PROTECT, related_name="exercise_uploads")
    slug = models.SlugField(max_length=100)
    uid = models.CharField(max_length=100, blank=True, help_text="id from exercise.toml, once it loads")
    digest = models.CharField(max_length=64)
    # Relative path -> text, as for ExerciseVersion.files: the folder is rebuilt from here.
    files = models.JSONField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True, help_text="why the folder itself is invalid")
    report = models.JSONField(null=True, blank=True, help_text="grader.host.ExerciseReport.to_dict()")
    published_version = models.ForeignKey(
        ExerciseVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Taken by a worker (attempts moves on), its lease renewed while it validates (grading.leases).
    attempts = models.PositiveSmallIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    validated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"upload {self.pk} of {self.slug} ({self.status})"

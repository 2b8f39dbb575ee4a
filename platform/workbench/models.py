from django.conf import settings
from django.db import models


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

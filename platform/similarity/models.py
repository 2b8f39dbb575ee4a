"""Fingerprints of graded submissions, kept so that a report compares stored numbers instead
of tokenizing hundreds of programs on every view."""

from django.db import models


class Fingerprint(models.Model):
    submission = models.OneToOneField(
        "grading.Submission", primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    # The winnowed fingerprints of the normalised code, the starter's left out:
    # [[hash, first line, last line], ...] in the order they occur (similarity.fingerprints).
    prints = models.JSONField(default=list)
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"fingerprints of submission {self.submission_id}"

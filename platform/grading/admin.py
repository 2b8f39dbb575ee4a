from django.contrib import admin
from django.http import HttpRequest

from grading.models import Submission


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    """View only: a student's code, verdict and score change through grading (a regrade or
    a recorded override in the gradebook), never by hand here."""

    list_display = ("id", "user", "exercise_version", "status", "verdict", "score", "created_at")
    list_filter = ("status", "verdict")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Submission | None = None) -> bool:
        return False

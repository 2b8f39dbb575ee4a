from django.contrib import admin

from grading.models import Submission


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "exercise_version", "status", "verdict", "score", "created_at")
    list_filter = ("status", "verdict")
    readonly_fields = ("result",)

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from grading.models import Submission
from grading.services import submissions_retry


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    """View only: a student's code, verdict and score change through grading (a regrade, the
    retry action below, or a recorded override in the gradebook), never by hand here."""

    list_display = ("id", "user", "exercise_version", "status", "verdict", "score", "attempts", "created_at")
    list_filter = ("status", "verdict")
    actions = ["retry"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Submission | None = None) -> bool:
        return False

    @admin.action(description=_("Requeue for grading (failed or stuck ones; graded ones are left alone)"))
    def retry(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        count = submissions_retry(queryset.values_list("id", flat=True))
        self.message_user(request, ngettext("%(n)d submission requeued.", "%(n)d submissions requeued.", count)
                          % {"n": count}, messages.SUCCESS)

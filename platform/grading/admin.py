from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from grading.models import Submission
from grading.services import submission_requeue


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "exercise_version", "status", "verdict", "score", "attempts", "created_at")
    list_filter = ("status", "verdict")
    readonly_fields = ("result",)
    actions = ["requeue"]

    @admin.action(description=_("Requeue for grading (failed or stuck ones; graded ones are left alone)"))
    def requeue(self, request: HttpRequest, queryset: QuerySet[Submission]) -> None:
        count = submission_requeue(queryset.values_list("id", flat=True))
        self.message_user(request, ngettext("%(n)d submission requeued.", "%(n)d submissions requeued.", count)
                          % {"n": count}, messages.SUCCESS)

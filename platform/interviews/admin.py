from django.contrib import admin

from interviews.models import InterviewAttempt, InterviewItem, InterviewTemplate


@admin.register(InterviewTemplate)
class InterviewTemplateAdmin(admin.ModelAdmin):
    list_display = ("uid", "title_en", "duration_s", "source", "retired")
    readonly_fields = ("spec", "digest")


class InterviewItemInline(admin.TabularInline):
    model = InterviewItem
    fields = ("position", "section", "kind", "question", "exercise", "response", "correct", "submission")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(InterviewAttempt)
class InterviewAttemptAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "template", "status", "current", "started_at", "deadline")
    list_filter = ("status", "template")
    inlines = [InterviewItemInline]

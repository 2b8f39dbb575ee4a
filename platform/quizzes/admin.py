from django.contrib import admin

from quizzes.models import AttemptItem, Bank, Question, QuizAttempt, ReviewState, Topic


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ("uid", "name_en", "name_zh")


@admin.register(Bank)
class BankAdmin(admin.ModelAdmin):
    list_display = ("uid", "title_en", "source", "time_limit_s", "retired")
    list_filter = ("retired",)


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ("uid", "bank", "type", "difficulty", "topic", "pitfall", "retired")
    list_filter = ("type", "difficulty", "topic", "retired")
    search_fields = ("uid", "pitfall")
    readonly_fields = ("spec", "digest")


class AttemptItemInline(admin.TabularInline):
    model = AttemptItem
    fields = ("position", "question", "response", "correct", "answered_at")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(QuizAttempt)
class QuizAttemptAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "kind", "bank", "status", "score", "max_score", "started_at", "deadline")
    list_filter = ("kind", "status")
    inlines = [AttemptItemInline]


@admin.register(ReviewState)
class ReviewStateAdmin(admin.ModelAdmin):
    list_display = ("user", "question", "box", "due_at", "misses")

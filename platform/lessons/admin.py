from django.contrib import admin

from lessons.models import Lesson, LessonProgress, LessonVersion, PlaygroundRun


@admin.register(Lesson)
class LessonAdmin(admin.ModelAdmin):
    list_display = ("slug", "order", "retired", "current_version")
    list_filter = ("retired",)


@admin.register(LessonVersion)
class LessonVersionAdmin(admin.ModelAdmin):
    list_display = ("lesson", "number", "title_en", "created_at")
    readonly_fields = ("digest", "meta")


@admin.register(LessonProgress)
class LessonProgressAdmin(admin.ModelAdmin):
    list_display = ("user", "lesson", "read_at")


@admin.register(PlaygroundRun)
class PlaygroundRunAdmin(admin.ModelAdmin):
    list_display = ("user", "kind", "state", "created_at", "status", "wall_s")
    list_filter = ("kind", "state", "failure")

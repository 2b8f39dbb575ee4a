from django.contrib import admin

from catalog.models import Exercise, ExerciseUpload, ExerciseVersion


class ExerciseVersionInline(admin.TabularInline):
    model = ExerciseVersion
    fields = ("number", "declared_version", "title_en", "digest", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Exercise)
class ExerciseAdmin(admin.ModelAdmin):
    list_display = ("slug", "uid", "current_version", "retired")
    list_filter = ("retired",)
    search_fields = ("slug", "uid")
    inlines = [ExerciseVersionInline]


@admin.register(ExerciseUpload)
class ExerciseUploadAdmin(admin.ModelAdmin):
    list_display = ("slug", "uploaded_by", "status", "created_at", "validated_at")
    list_filter = ("status",)
    readonly_fields = ("uploaded_by", "slug", "uid", "digest", "files", "status", "error", "report",
                       "published_version", "validated_at")

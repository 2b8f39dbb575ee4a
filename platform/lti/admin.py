from django.contrib import admin

from lti.models import GradeSync, LinkedAccount, LinkedCourse, LinkedItem


@admin.register(LinkedAccount)
class LinkedAccountAdmin(admin.ModelAdmin):
    list_display = ["issuer", "sub", "user", "created_at"]
    search_fields = ["sub", "user__username"]


@admin.register(LinkedCourse)
class LinkedCourseAdmin(admin.ModelAdmin):
    list_display = ["context", "course", "roster_synced_at", "roster_members"]


@admin.register(LinkedItem)
class LinkedItemAdmin(admin.ModelAdmin):
    list_display = ["resource_link", "item", "lineitem_url"]


@admin.register(GradeSync)
class GradeSyncAdmin(admin.ModelAdmin):
    list_display = ["link", "user", "state", "score_given", "tries", "updated_at"]
    list_filter = ["state"]

from django.contrib import admin
from django.http import HttpRequest

from lti.models import GradeSync, LinkedAccount, LinkedCourse, LinkedItem, RegistrationLink


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


@admin.register(RegistrationLink)
class RegistrationLinkAdmin(admin.ModelAdmin):
    """Links are made on /lti/registrations/ (the secret is shown there once); here they are only read
    or deleted (a deleted link registers nothing)."""

    list_display = ["name", "created_by", "created_at", "expires_at", "used_at", "registration"]
    readonly_fields = ["name", "token_digest", "created_by", "expires_at", "used_at", "registration"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.models import User


@admin.register(User)
class GraphDojoUserAdmin(UserAdmin):
    fieldsets = (*(UserAdmin.fieldsets or ()), ("GraphDojo", {"fields": ("role",)}))
    list_display = ("username", "email", "role", "is_staff")
    list_filter = ("role", "is_staff")

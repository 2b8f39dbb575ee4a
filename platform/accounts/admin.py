from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from accounts.models import User
from accounts.services import password_changed


@admin.register(User)
class GraphDojoUserAdmin(UserAdmin):
    fieldsets = (*(UserAdmin.fieldsets or ()), ("GraphDojo", {"fields": ("role",)}))
    list_display = ("username", "email", "role", "is_staff")
    list_filter = ("role", "is_staff")

    def user_change_password(self, request: HttpRequest, id: str, form_url: str = "") -> HttpResponse:
        """A password an administrator sets (to give an account back) ends its API tokens and
        tells its address, as the owner's own change does."""
        response = super().user_change_password(request, id, form_url)
        if request.method == "POST" and response.status_code == 302:
            user = self.get_object(request, id)
            if user is not None:
                password_changed(user, request.build_absolute_uri(reverse("accounts:password_reset")))
        return response

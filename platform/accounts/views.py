from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _

from accounts.forms import BoardIdentityForm, SignUpForm
from accounts.services import password_changed


def _safe_next(request: HttpRequest) -> str | None:
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return target
    return None


def signup(request):
    """Anyone may sign up as a student; instructors are made by an administrator."""
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(
            request, _("Welcome! Your leaderboard name is %(name)s; change it any time.") % {"name": user.pseudonym}
        )
        return redirect(_safe_next(request) or "submissions:exercise_list")
    return render(request, "accounts/signup.html", {"form": form, "next": _safe_next(request) or ""})


@login_required
def profile(
    request: HttpRequest, template_name: str = "accounts/profile.html", extra_context: dict[str, Any] | None = None
) -> HttpResponse:
    """The account's settings; an app above accounts may show more under them (progress.views)."""
    form = BoardIdentityForm(request.POST or None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Saved."))
        return redirect("accounts:profile")
    context = {"form": form, **(extra_context or {})}
    return render(request, template_name, context, status=400 if form.errors else 200)


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's change form (the current password first); API tokens end, the owner's address is told."""

    template_name = "accounts/password_change_form.html"
    success_url = reverse_lazy("accounts:password_change_done")

    def form_valid(self, form):
        response = super().form_valid(form)
        password_changed(form.user, self.request.build_absolute_uri(reverse("accounts:password_reset")))
        return response


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """Django's reset by emailed token; once it is used, API tokens end and the owner's address is told."""

    template_name = "accounts/password_reset_confirm.html"
    success_url = reverse_lazy("accounts:password_reset_complete")

    def form_valid(self, form):
        response = super().form_valid(form)
        password_changed(form.user, self.request.build_absolute_uri(reverse("accounts:password_reset")))
        return response

"""Login with a brake: after repeated failures for one name from one address, refuse for a while.

The failures are counted in the cache (Redis). When it does not answer, the brake lets the
try through rather than failing every login: a password hash still costs each guess a
fraction of a second, and a site nobody can log in to is the worse outage.
"""
from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.utils.translation import gettext as _

from grading.best_effort_cache import quietly


def _failures_key(request) -> str:
    username = request.POST.get("username", "").strip().lower()
    who = f"{username}|{request.META.get('REMOTE_ADDR', '')}"
    return "login-failures:" + hashlib.sha256(who.encode()).hexdigest()[:32]


def _count_failure(key: str) -> None:
    cache.add(key, 0, settings.LOGIN_THROTTLE_S)
    try:
        cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, settings.LOGIN_THROTTLE_S)


class ThrottledLoginView(LoginView):
    """Django's login; LOGIN_FAILURES_ALLOWED failures in LOGIN_THROTTLE_S refuse the next tries."""

    def post(self, request, *args, **kwargs):
        key = _failures_key(request)
        if quietly(lambda: cache.get(key, 0), default=0, what="login brake") >= settings.LOGIN_FAILURES_ALLOWED:
            form = self.get_form()
            minutes = max(1, settings.LOGIN_THROTTLE_S // 60)
            message = _("Too many failed logins for this name. Try again in %(minutes)s minutes.") % {
                "minutes": minutes}
            return self.render_to_response(self.get_context_data(form=form, throttled=message), status=429)
        response = super().post(request, *args, **kwargs)
        if response.status_code == 200:  # the form came back: wrong name or password
            quietly(lambda: _count_failure(key), what="login brake")
        else:
            quietly(lambda: cache.delete(key), what="login brake")
        return response

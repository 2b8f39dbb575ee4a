"""Login with a brake: repeated failures refuse further tries for a while, counted three ways
(issue 24): one name from one address, one account from anywhere (an attacker with many
addresses), and one address against any name (one address spraying a common password).

The name is counted as Django reads it: the login form applies NFKC, so ``ｓｔｕｄｅｎｔ``
(full-width) is the account ``student`` and must share its count; case is folded as well, so
the brake is, if anything, stricter than the lookup. The admin has no login form of its own:
``/admin/login/`` sends the browser here (config/urls.py). The password-change form, which
asks for the current password, counts and is braked the same way (``/accounts/password/``).

The failures are counted in the cache (Redis). When it does not answer, the brake lets the
try through rather than failing every login: a password hash still costs each guess a
fraction of a second, and a site nobody can log in to is the worse outage.
"""
from __future__ import annotations

import functools
import hashlib
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib.auth.forms import PasswordChangeForm
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from accounts.views import PasswordChangeView
from caching.best_effort import quietly


def login_name(raw: str) -> str:
    """The name as the login form and the user model read it (NFKC), case folded."""
    return unicodedata.normalize("NFKC", raw).strip().casefold()


def client_address(request: HttpRequest) -> str:
    """Who is logging in. Behind the deployment's proxy every connection comes from the proxy,
    and one address-wide count would brake the whole site: there the proxy's own entry, the
    last of X-Forwarded-For, names the client (what a client wrote there itself comes before it)."""
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if settings.BEHIND_TLS_PROXY and forwarded:
        return forwarded.rsplit(",", 1)[-1].strip()
    return request.META.get("REMOTE_ADDR", "")


def _key(kind: str, value: str) -> str:
    return f"login-failures:{kind}:" + hashlib.sha256(value.encode()).hexdigest()[:32]


def brake_counters(request: HttpRequest, name: str | None = None) -> list[tuple[str, int]]:
    """(cache key, failures allowed) of every count a login attempt is braked by; ``name`` is
    the account's when the password is tried on another form than the login's."""
    name = login_name(request.POST.get("username", "") if name is None else name)
    address = client_address(request)
    return [
        (_key("name-address", f"{name}|{address}"), settings.LOGIN_FAILURES_ALLOWED),
        (_key("account", name), settings.LOGIN_ACCOUNT_FAILURES_ALLOWED),
        (_key("address", address), settings.LOGIN_ADDRESS_FAILURES_ALLOWED),
    ]


def login_braked(request: HttpRequest, name: str | None = None) -> bool:
    counters = brake_counters(request, name)
    counts = quietly(lambda: cache.get_many([key for key, _allowed in counters]), default={}, what="login brake")
    return any(counts.get(key, 0) >= allowed for key, allowed in counters)


def _count_failure(key: str) -> None:
    cache.add(key, 0, settings.LOGIN_THROTTLE_S)
    try:
        cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, settings.LOGIN_THROTTLE_S)


def login_failed(request: HttpRequest, name: str | None = None) -> None:
    for key, _allowed in brake_counters(request, name):
        quietly(functools.partial(_count_failure, key), what="login brake")


def login_succeeded(request: HttpRequest) -> None:
    """Forget this name's failures from this address; the account's and the address's counts
    run out on their own (a success must not wipe the count of an attack from elsewhere)."""
    key, _allowed = brake_counters(request)[0]
    quietly(lambda: cache.delete(key), what="login brake")


class ThrottledLoginView(LoginView):
    """Django's login, braked (see the module's docstring)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if login_braked(request):
            form = self.get_form()
            minutes = max(1, settings.LOGIN_THROTTLE_S // 60)
            message = _("Too many failed logins for this name. Try again in %(minutes)s minutes.") % {
                "minutes": minutes}
            return self.render_to_response(self.get_context_data(form=form, throttled=message), status=429)
        response = super().post(request, *args, **kwargs)
        if response.status_code == 200:  # the form came back: wrong name or password
            login_failed(request)
        else:
            login_succeeded(request)
        return response


class ThrottledPasswordChangeView(PasswordChangeView):
    """The password-change form asks for the current password: with a session alone (a cookie
    taken, a computer left logged in) it would guess that password without end (red team). A
    wrong current password counts as a failed login of the account, and the form is braked by
    the same counts as the login form, so guesses on either form add up."""

    def _braked_response(self) -> HttpResponse:
        minutes = max(1, settings.LOGIN_THROTTLE_S // 60)
        message = _("Too many wrong passwords for this account. Try again in %(minutes)s minutes.") % {
            "minutes": minutes}
        # An unbound form: a bound one would check the guess while rendering its errors.
        kwargs = {k: v for k, v in self.get_form_kwargs().items() if k not in ("data", "files")}
        unbound = self.get_form_class()(**kwargs)
        return self.render_to_response(self.get_context_data(form=unbound, throttled=message), status=429)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if login_braked(request, name=request.user.get_username()):
            return self._braked_response()
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form: PasswordChangeForm) -> HttpResponse:
        if form.has_error("old_password"):
            login_failed(self.request, name=self.request.user.get_username())
        return super().form_invalid(form)

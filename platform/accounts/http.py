from django.http import HttpRequest

from accounts.models import User


class AuthenticatedHttpRequest(HttpRequest):
    """The request a @login_required view receives: its user is signed in, never anonymous."""

    user: User

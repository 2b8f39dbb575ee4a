"""Strings this app added to shared templates (the login page, the top navigation), listed
so that `makemessages` run in this app keeps them in its catalogue."""

from django.utils.translation import gettext_noop

SHARED_TEMPLATE_STRINGS = (
    gettext_noop("Sign up"),
    gettext_noop("Forgot your password?"),
    gettext_noop("Courses"),
)

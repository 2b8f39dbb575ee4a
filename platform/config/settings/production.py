"""Production: no development defaults survive here."""
from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.base import SECRET_KEY

if len(SECRET_KEY) < 32 or "insecure" in SECRET_KEY or "not-for-production" in SECRET_KEY:
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY must be set to a random value of at least 32 characters in production "
        "(python -c 'import secrets; print(secrets.token_urlsafe(50))')."
    )
DEBUG = False
# WhiteNoise (in base.py) serves the files collectstatic gathered.
WHITENOISE_USE_FINDERS = False
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_CONTENT_TYPE_NOSNIFF = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

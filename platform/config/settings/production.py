"""Production: no development defaults survive here."""
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int
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
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "config.storage.StaticFilesStorage"},
}

# HTTPS. The defaults are what `manage.py check --deploy` asks for; turn one off only for a
# site that really is served over plain HTTP (a private test, say).
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", True)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto (and strips a client's own):
# only then may Django believe the header.
if env_bool("DJANGO_BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Health checks and Prometheus come over plain HTTP from inside the deployment.
SECURE_REDIRECT_EXEMPT = [r"^healthz/$", r"^metrics$"]

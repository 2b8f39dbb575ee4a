"""The test suite. Database and broker come from the environment like everywhere else;
`make test` points them at the real PostgreSQL and Redis."""
from config.env import env_str
from config.settings.base import *  # noqa: F403

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "graphdojo-test-key")
DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

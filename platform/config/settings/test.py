"""The test suite. Database and broker come from the environment like everywhere else;
`make test` points them at the real PostgreSQL and Redis."""
from config.env import env_int, env_str
from config.settings.base import *  # noqa: F403

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "graphdojo-test-key")
DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# No warm pool unless a test asks: containers refilling in the background would only add
# load to a 2-core CI machine (tests/sandbox and the benchmarks exercise the pool itself).
SANDBOX_POOL_SIZE = env_int("SANDBOX_POOL_SIZE", 0)

"""Settings shared by every environment. Each value comes from the environment, with a
default that is safe for a developer's machine; production.py removes the unsafe ones."""
import os
from pathlib import Path

import dj_database_url
from django.utils.translation import gettext_lazy as _

from config.env import env_bool, env_int, env_list, env_str
from grader import contract

PLATFORM_DIR = Path(__file__).resolve().parents[2]
BASE_DIR = PLATFORM_DIR.parent
VAR_DIR = Path(env_str("GRAPHDOJO_VAR_DIR", str(BASE_DIR / "var")))

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "accounts",
    "catalog",
    "grading",
    "submissions",
    "authoring",
    "quizzes",
    "interviews",
    "workbench",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "api",
    "lessons",
    "glossary",
    "courses",
    "leaderboards",
    "operations",
    "similarity",
    "progress",
    "lti_tool",
    "lti",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files come from WhiteNoise everywhere, so `make run` can keep DEBUG off.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [PLATFORM_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

# Connections are kept a minute, and checked before a request or a task reuses one: after a
# PostgreSQL restart a kept connection is dead, and without the check the first page each
# gunicorn worker serves would be a 500 (tests/platform/operations/test_compose.py).
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"), conn_max_age=60, conn_health_checks=True
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # The embedded default serves a site and its worker from one file. WAL lets readers go on
    # while one writes; a transaction that writes takes the write lock when it begins
    # (IMMEDIATE), so it waits its turn (the busy timeout) instead of failing "database is
    # locked" when it upgrades a read lock another writer got first.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": env_int("SQLITE_BUSY_TIMEOUT_S", 30),
        **DATABASES["default"].get("OPTIONS", {}),
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The leaderboard's covering index (INCLUDE columns) speeds PostgreSQL up; SQLite, the
# embedded default, builds it without them, which is fine for a one-machine site.
SILENCED_SYSTEM_CHECKS = ["models.W040"]
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "submissions:exercise_list"
LOGOUT_REDIRECT_URL = "login"

# Mail (password resets, course invitations): printed on the console unless told otherwise;
# EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend plus EMAIL_HOST... for SMTP, or
# the file backend with EMAIL_FILE_PATH.
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "GraphDojo <noreply@localhost>")

AUTH_PASSWORD_VALIDATORS = [
    # OWASP ASVS 2.1.1: at least 12 characters; no composition rules (2.1.9).
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
_language_names = {"en": _("English"), "zh-hans": _("Simplified Chinese")}
LANGUAGES = [(code, _language_names[code]) for code in contract.LANGUAGES]  # the one list of languages
LOCALE_PATHS = [PLATFORM_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [PLATFORM_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
# Without collectstatic (make run, tests) WhiteNoise finds the files where they are; an
# empty STATIC_ROOT keeps it from warning that collectstatic never ran.
WHITENOISE_USE_FINDERS = env_bool("WHITENOISE_USE_FINDERS", True)
if WHITENOISE_USE_FINDERS:
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)

# Grading times, in the order that keeps every grading alive and none run twice:
#   the longest grading < the stale time (a RUNNING row older than this lost its worker and is
#   reclaimed) < Redis's visibility timeout (an unacknowledged message comes back after it).
# grading.checks refuses to start with them out of order.
GRADING_MAX_S = env_int("GRADING_MAX_S", 5 * 60)
SUBMISSION_STALE_AFTER_S = env_int("SUBMISSION_STALE_AFTER_S", GRADING_MAX_S + 2 * 60)
CELERY_VISIBILITY_TIMEOUT_S = env_int("CELERY_VISIBILITY_TIMEOUT_S", SUBMISSION_STALE_AFTER_S + 5 * 60)
# A running job (grading, practice run, upload validation) holds a lease that its worker renews
# every GRADING_HEARTBEAT_S; a job whose lease lapsed lost its worker and is taken again, so a
# killed worker costs about one lease, not the longest grading (grading.leases). The stale time
# above still caps a job that hangs with its worker alive.
GRADING_LEASE_S = env_int("GRADING_LEASE_S", 30)
GRADING_HEARTBEAT_S = env_int("GRADING_HEARTBEAT_S", 5)
# How often the sweep re-sends lost tasks and reclaims lapsed rows (Celery beat; `serve` runs it).
GRADING_SWEEP_EVERY_S = env_int("GRADING_SWEEP_EVERY_S", 15)
# Infrastructure faults (engine, database, broker) are retried with a backoff doubling from
# GRADING_RETRY_BACKOFF_S up to GRADING_RETRY_BACKOFF_MAX_S: by default about 13 minutes in all.
GRADING_RETRY_BACKOFF_S = env_int("GRADING_RETRY_BACKOFF_S", 5)
GRADING_RETRY_BACKOFF_MAX_S = env_int("GRADING_RETRY_BACKOFF_MAX_S", 4 * 60)
# Scores sent back to an LMS (platform/lti): tries after the first, and their spacing (doubling).
LTI_GRADE_MAX_RETRIES = env_int("LTI_GRADE_MAX_RETRIES", 8)
LTI_GRADE_RETRY_BACKOFF_S = env_int("LTI_GRADE_RETRY_BACKOFF_S", 10)
LTI_GRADE_RETRY_BACKOFF_MAX_S = env_int("LTI_GRADE_RETRY_BACKOFF_MAX_S", 10 * 60)
GRADING_MAX_RETRIES = env_int("GRADING_MAX_RETRIES", 8)
# A grading whose speed did not settle is measured again once, this long after (grading.measure_again).
GRADING_MEASURE_AGAIN_AFTER_S = env_int("GRADING_MEASURE_AGAIN_AFTER_S", 60)
# Fairness: a student's submissions waiting or running, and submissions a minute.
SUBMISSIONS_IN_FLIGHT_MAX = env_int("SUBMISSIONS_IN_FLIGHT_MAX", 3)
SUBMISSIONS_PER_MINUTE_MAX = env_int("SUBMISSIONS_PER_MINUTE_MAX", 6)
# Leaderboards: the top of each exercise's board is re-measured in one session (one task,
# one sandbox, one seed, the candidates interleaved over ROUNDS rounds) after a new best
# reaches it (requests within the debounce join one batch) and at least this often; beat
# looks for boards due every LEADERBOARD_VERIFY_SWEEP_S.
LEADERBOARD_VERIFY_TOP = env_int("LEADERBOARD_VERIFY_TOP", 10)
# ...and the top few of each course's board of the exercise, at most MAX candidates a batch.
LEADERBOARD_VERIFY_COURSE_TOP = env_int("LEADERBOARD_VERIFY_COURSE_TOP", 3)
LEADERBOARD_VERIFY_MAX = env_int("LEADERBOARD_VERIFY_MAX", 30)
LEADERBOARD_VERIFY_ROUNDS = env_int("LEADERBOARD_VERIFY_ROUNDS", 2)
LEADERBOARD_VERIFY_DEBOUNCE_S = env_int("LEADERBOARD_VERIFY_DEBOUNCE_S", 120)
LEADERBOARD_VERIFY_EVERY_S = env_int("LEADERBOARD_VERIFY_EVERY_S", 6 * 3600)
LEADERBOARD_VERIFY_SWEEP_S = env_int("LEADERBOARD_VERIFY_SWEEP_S", 600)

# Celery: the broker needs no server by default (kombu's filesystem transport); set
# CELERY_BROKER_URL=redis://... to use Redis. Task arguments are ids, so JSON suffices.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {
        "data_folder_in": str(VAR_DIR / "broker"),
        "data_folder_out": str(VAR_DIR / "broker"),
        "control_folder": str(VAR_DIR / "broker-control"),  # else kombu writes ./control
        "store_processed": False,
    }
    if CELERY_BROKER_URL.startswith("filesystem")
    else {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT_S}
)
if CELERY_BROKER_URL.startswith("filesystem"):
    for folder in ("broker", "broker-control"):
        (VAR_DIR / folder).mkdir(parents=True, exist_ok=True)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
# A pool child killed mid-task (the OOM killer) puts its message back instead of acking it.
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_DEFAULT_QUEUE = "cpu"
# A submit must not hang on a dead broker: one quick try, then the sweep sends it later.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5}
# Django's LOGGING (the submission id on every line) rather than Celery's own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BEAT_SCHEDULE = {
    "grading-sweep": {"task": "grading.tasks.sweep_submissions", "schedule": GRADING_SWEEP_EVERY_S},
    "practice-sweep": {"task": "workbench.tasks.sweep_practice_runs", "schedule": GRADING_SWEEP_EVERY_S},
    "leaderboards-verify": {
        "task": "leaderboards.tasks.verifications_sweep_task",
        "schedule": LEADERBOARD_VERIFY_SWEEP_S,
    },
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# Grading
SANDBOX_BACKEND = env_str("SANDBOX_BACKEND", "auto")  # auto | local | docker
SANDBOX_IMAGE = env_str("SANDBOX_IMAGE", "graphdojo-sandbox:latest")
SANDBOX_RUNTIME = env_str("SANDBOX_RUNTIME", "runc")  # runc | runsc (gVisor)
# Warm containers per worker process (Docker only: numpy and torch already imported, refilled
# at low CPU priority). One per core: a burst as large as the cores finds them all warm.
SANDBOX_POOL_SIZE = env_int("SANDBOX_POOL_SIZE", os.cpu_count() or 1)
SANDBOX_ALLOW_UNISOLATED = env_bool("SANDBOX_ALLOW_UNISOLATED", False)
CONTENT_DIR = Path(env_str("GRAPHDOJO_CONTENT_DIR", str(BASE_DIR / "exercises")))
EXERCISE_CACHE_DIR = VAR_DIR / "exercise-cache"
SUBMISSION_MAX_BYTES = env_int("SUBMISSION_MAX_BYTES", 64 * 1024)
# "Run the visible checks" (not scored): how many runs one student may start per minute.
PRACTICE_RUNS_PER_MINUTE = env_int("PRACTICE_RUNS_PER_MINUTE", 6)
# A practice run with no result this long after it was asked for (its task lost, a worker
# gone) ends as "could not run", so its page stops waiting; retries of an unavailable
# sandbox end it sooner.
PRACTICE_RUN_DEADLINE_S = env_int("PRACTICE_RUN_DEADLINE_S", 300)
# The same for a playground run or a compile-flow rerun (a 30 s program, and the retries of an
# unavailable sandbox, fit well inside).
LESSONS_PLAYGROUND_DEADLINE_S = env_int("LESSONS_PLAYGROUND_DEADLINE_S", 180)

# The REST API: personal tokens (made on /api/token/) or the browser's session; every
# endpoint needs a user, as the pages do.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "GraphDojo API",
    "DESCRIPTION": "Exercises, submissions and their verdicts, quizzes. Send `Authorization: Token <key>`.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",  # served from our static files, never a CDN
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}


# The cache holds login throttles and the operators' view of the workers: Redis where the
# broker is Redis (every web process sees the same counts), else this process's memory.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CELERY_BROKER_URL,
                "KEY_PREFIX": "graphdojo-cache"}
    if CELERY_BROKER_URL.startswith("redis")
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}
LOGIN_FAILURES_ALLOWED = env_int("LOGIN_FAILURES_ALLOWED", 5)
LOGIN_THROTTLE_S = env_int("LOGIN_THROTTLE_S", 15 * 60)
# How long a course invitation's emailed link stays valid (the instructor can send it again).
INVITATION_VALID_S = env_int("INVITATION_VALID_S", 14 * 24 * 3600)
# Prometheus's bearer token for /metrics (staff may read it logged in; empty: staff only).
METRICS_TOKEN = env_str("METRICS_TOKEN", "")
# Behind the TLS proxy of deploy/README.md, which appends the client to X-Forwarded-For.
BEHIND_TLS_PROXY = env_bool("DJANGO_BEHIND_TLS_PROXY", False)
# Failures against one account from any address, and from one address against any name.
LOGIN_ACCOUNT_FAILURES_ALLOWED = env_int("LOGIN_ACCOUNT_FAILURES_ALLOWED", 20)
LOGIN_ADDRESS_FAILURES_ALLOWED = env_int("LOGIN_ADDRESS_FAILURES_ALLOWED", 50)

# One line per event, with the submission it concerns (from the view to the stored verdict).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"submission": {"()": "grading.logs.SubmissionFilter"}},
    "formatters": {
        "line": {"format": "%(asctime)s %(levelname)s %(processName)s %(name)s submission=%(submission)s %(message)s"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "line", "filters": ["submission"]}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

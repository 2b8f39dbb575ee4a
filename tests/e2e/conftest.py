"""The e2e tests share tests/conftest.py's fixtures: a real Celery worker (celery_worker_process),
Chromium and its page."""

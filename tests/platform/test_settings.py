"""Every setting comes from the environment; production refuses unsafe defaults."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRINT_SETTINGS = (
    "import json, django; from django.conf import settings; django.setup(); "
    "db = settings.DATABASES['default']; print(json.dumps({"
    "'engine': db['ENGINE'], 'name': db['NAME'], 'host': db['HOST'], 'broker': settings.CELERY_BROKER_URL, "
    "'debug': settings.DEBUG, 'hosts': settings.ALLOWED_HOSTS, 'backend': settings.SANDBOX_BACKEND, "
    "'pool': settings.SANDBOX_POOL_SIZE, 'max_bytes': settings.SUBMISSION_MAX_BYTES, 'secret': settings.SECRET_KEY}))"
)


def settings_under(module: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "SANDBOX_"))}
    clean.update(PYTHONPATH=str(ROOT / "platform"), DJANGO_SETTINGS_MODULE=module, **env)
    return subprocess.run([sys.executable, "-c", PRINT_SETTINGS], cwd=ROOT, env=clean,
                          capture_output=True, text=True, timeout=60)


def test_local_defaults_are_embedded(tmp_path):
    done = settings_under("config.settings.local", GRAPHDOJO_VAR_DIR=str(tmp_path))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["engine"].endswith("sqlite3") and seen["name"] == str(tmp_path / "db.sqlite3")
    assert seen["broker"] == "filesystem://"
    assert seen["debug"] is False  # make run shows the site's error pages, not Django's debug page
    assert seen["backend"] == "auto"


def test_debug_is_on_only_when_a_setting_asks(tmp_path):
    done = settings_under("config.settings.local", GRAPHDOJO_VAR_DIR=str(tmp_path), DJANGO_DEBUG="true")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["debug"] is True


def test_values_are_read_from_the_environment():
    done = settings_under(
        "config.settings.local",
        DATABASE_URL="postgres://alice:pw@db.example:6543/dojo",
        CELERY_BROKER_URL="redis://cache.example:6380/3",
        DJANGO_DEBUG="true",
        DJANGO_ALLOWED_HOSTS="dojo.example, www.dojo.example",
        SANDBOX_BACKEND="docker",
        SANDBOX_POOL_SIZE="4",
        SUBMISSION_MAX_BYTES="1000",
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert (seen["engine"], seen["name"], seen["host"]) == ("django.db.backends.postgresql", "dojo", "db.example")
    assert seen["broker"] == "redis://cache.example:6380/3"
    assert seen["debug"] is True
    assert seen["hosts"] == ["dojo.example", "www.dojo.example"]
    assert (seen["backend"], seen["pool"], seen["max_bytes"]) == ("docker", 4, 1000)


def test_a_malformed_value_is_named():
    done = settings_under("config.settings.local", SANDBOX_POOL_SIZE="lots")
    assert done.returncode != 0
    assert "SANDBOX_POOL_SIZE must be a whole number, got 'lots'" in done.stderr


def test_production_refuses_to_start_without_a_real_secret_key():
    for secret in ("", "short", "graphdojo-local-development-key-not-for-production"):
        done = settings_under("config.settings.production", DJANGO_SECRET_KEY=secret)
        assert done.returncode != 0
        assert "DJANGO_SECRET_KEY must be set" in done.stderr


def test_production_starts_with_a_real_secret_key():
    secret = "k" * 20 + "Zq8-3vW_pL0xYt7Rb2Nc"
    done = settings_under("config.settings.production", DJANGO_SECRET_KEY=secret)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["debug"] is False

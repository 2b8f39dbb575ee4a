"""grading/sandboxes.py and its start-up check: the SANDBOX_* settings become a typed
configuration, and one that no sandbox takes stops the site and the workers at start-up."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from grader.host import DockerConfig, LocalConfig
from grading.checks import refuse_bad_sandbox_settings, sandbox_settings_check, sandbox_settings_problems
from grading.sandboxes import sandbox_configured

ROOT = Path(__file__).resolve().parents[2]


def test_the_named_backend_takes_its_own_options_from_the_settings(settings):
    settings.SANDBOX_BACKEND, settings.SANDBOX_ALLOW_UNISOLATED = "local", True
    assert sandbox_configured() == LocalConfig(allow_unisolated=True)
    settings.SANDBOX_BACKEND, settings.SANDBOX_RUNTIME, settings.SANDBOX_POOL_SIZE = "docker", "runsc", 3
    assert sandbox_configured() == DockerConfig(image=settings.SANDBOX_IMAGE, runtime="runsc", pool_size=3)
    assert sandbox_configured("docker", pool_size=0).pool_size == 0  # type: ignore[union-attr]
    assert sandbox_settings_problems() == []


@pytest.mark.parametrize(("setting", "value", "named"), [
    ("SANDBOX_BACKEND", "dokcer", "unknown sandbox backend 'dokcer'"),
    ("SANDBOX_RUNTIME", "runcs", "got 'runcs'"),
    ("SANDBOX_POOL_SIZE", -2, "pool_size must be a whole number"),
])
def test_a_sandbox_setting_no_sandbox_takes_is_refused(settings, setting, value, named):
    setattr(settings, setting, value)
    assert [error.id for error in sandbox_settings_check(None)] == ["grading.E002"]
    assert named in sandbox_settings_problems()[0]
    with pytest.raises(ImproperlyConfigured, match=named):
        refuse_bad_sandbox_settings()


def test_the_site_does_not_start_with_a_misspelt_sandbox_setting(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "SANDBOX_"))}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", GRAPHDOJO_VAR_DIR=str(tmp_path))
    checked = [subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, capture_output=True, text=True,
                              timeout=120, env={**env, **extra}) for extra in ({}, {"SANDBOX_RUNTIME": "gvisor"})]
    assert checked[0].returncode == 0, checked[0].stderr
    assert checked[1].returncode != 0
    assert "grading.E002" in checked[1].stderr and "'gvisor'" in checked[1].stderr, checked[1].stderr

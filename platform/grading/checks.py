"""Start-up checks: grading times in the order that neither loses nor doubles a grading, and
sandbox settings that a sandbox takes."""
from __future__ import annotations

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from grader.host import SandboxConfigError
from grading.sandboxes import sandbox_configured


def grading_times_problems() -> list[str]:
    longest, stale, visibility = (settings.GRADING_MAX_S, settings.SUBMISSION_STALE_AFTER_S,
                                  settings.CELERY_VISIBILITY_TIMEOUT_S)
    problems = []
    if not longest < stale:
        problems.append(f"SUBMISSION_STALE_AFTER_S ({stale}) must exceed GRADING_MAX_S ({longest}), "
                        "or a grading still running is taken for lost and run twice")
    if settings.CELERY_BROKER_URL.startswith("redis") and not stale < visibility:
        problems.append(f"CELERY_VISIBILITY_TIMEOUT_S ({visibility}) must exceed SUBMISSION_STALE_AFTER_S ({stale}), "
                        "or Redis hands a running grading to a second worker, which drops it")
    lease, beat = settings.GRADING_LEASE_S, settings.GRADING_HEARTBEAT_S
    if not 2 * beat < lease:
        problems.append(f"GRADING_LEASE_S ({lease}) must exceed twice GRADING_HEARTBEAT_S ({beat}), "
                        "or one late heartbeat lets a running job be taken for lost")
    return problems


@checks.register("grading")
def grading_times_check(app_configs: object, **kwargs: object) -> list[checks.Error]:
    return [checks.Error(problem, id="grading.E001") for problem in grading_times_problems()]


def refuse_bad_grading_times(**kwargs: object) -> None:
    """A worker does not start with grading times that would lose or double gradings."""
    if problems := grading_times_problems():
        raise ImproperlyConfigured("; ".join(problems))


def sandbox_settings_problems() -> list[str]:
    """What the sandbox settings (SANDBOX_*) get wrong: a backend or a value no sandbox takes."""
    try:
        sandbox_configured()
    except SandboxConfigError as error:
        return [f"the sandbox settings are refused: {error}"]
    return []


@checks.register("grading")
def sandbox_settings_check(app_configs: object, **kwargs: object) -> list[checks.Error]:
    return [checks.Error(problem, id="grading.E002") for problem in sandbox_settings_problems()]


def refuse_bad_sandbox_settings(**kwargs: object) -> None:
    """A worker does not start with sandbox settings it would fail every grading on."""
    if problems := sandbox_settings_problems():
        raise ImproperlyConfigured("; ".join(problems))

"""Template helpers for verdicts, difficulties and durations in the reader's language."""

import dataclasses
from typing import Any

from django import template
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from grading.dispatch import SUBMISSION_JOB
from grading.jobs import JobKind, Progress
from workbench import messages
from workbench.models import PracticeRun
from workbench.practice import PRACTICE_JOB
from workbench.selectors import hints_of
from workbench.verdicts import VerdictView, verdict_view

register = template.Library()


# The job kinds whose rows these pages poll; their progress map is the one model of what a page shows.
JOB_OF = {PracticeRun: PRACTICE_JOB}


@register.simple_tag
def progress(row: Any) -> Progress:
    """Where a polled job stands (queued, running, measuring, done, failed), by the job path's map."""
    kind: JobKind = JOB_OF.get(type(row), SUBMISSION_JOB)
    return kind.progress_of(row)


@register.simple_tag
def verdict_of(submission: Any) -> VerdictView | None:
    """The readable view of a finished submission's stored verdict."""
    if not submission.result:
        return None
    return verdict_view(submission.result, submission.exercise_version.check_titles)


@register.simple_tag
def practice_view(run: Any) -> VerdictView | None:
    """The readable view of a finished practice run (visible checks only)."""
    if not run.result:
        return None
    return verdict_view(run.result, run.exercise_version.check_titles)


@register.filter
def verdict_name(kind: str) -> str:
    return str(messages.VERDICT_NAMES.get(kind, kind))


@register.filter
def difficulty_name(difficulty: str) -> str:
    return str(messages.DIFFICULTIES.get(difficulty, difficulty))


@register.filter
def duration(seconds: Any) -> str:
    """900 -> "15 minutes"."""
    try:
        return messages.duration(float(seconds))
    except (TypeError, ValueError):
        return ""


@register.filter
def points(value: Any) -> str:
    """2.0 -> "2", 1.5 -> "1.5"."""
    try:
        return f"{float(value):g}"
    except (TypeError, ValueError):
        return ""


def _times(value: float) -> str:
    """2.3456 -> "2.3", 12.34 -> "12": two significant digits are all the noise allows."""
    return f"{value:.2g}" if value < 10 else f"{value:.0f}"


def _baseline_name(name: str) -> str:
    known = {
        "reference": _("the reference solution"),
        "loop": _("the plain loop"),
        "eager": _("the eager baseline"),
        "naive": _("the naive version"),
    }
    return str(known.get(name) or _("the “%(name)s” baseline") % {"name": name})


@dataclasses.dataclass
class PerfWords:
    """A performance case said in words: what was compared, how it came out, what was needed."""

    baseline: str
    baseline_time_label: str
    outcome: str
    interval: str
    needed: str
    details: list[tuple[str, str]]


def measured_on(host: dict[str, Any], load: dict[str, Any], clock: Any) -> list[tuple[str, str]]:
    """Where the timing came from: the machine, its load while the grading ran, and the clock."""
    rows: list[tuple[str, str]] = []
    if host.get("cpus"):
        machine = _("%(cpu)s, %(n)s CPUs") % {"cpu": host.get("cpu_model") or _("an unnamed CPU"), "n": host["cpus"]}
        if host.get("arch"):
            machine += f" ({host['arch']})"
        if host.get("sandbox"):
            machine += _(", in the %(sandbox)s sandbox") % {"sandbox": host["sandbox"]}
        rows.append((_("Timed on"), machine))
    if isinstance(load.get("runnable_mean"), int | float) and load.get("cpus"):
        busy = _("busy: more tasks wanted a CPU than it has") if load.get("busy") else _("not busy")
        rows.append((_("Load on that machine"), _(
            "%(mean)s tasks wanting a CPU on average (at most %(max)s) for %(cpus)s CPUs: %(busy)s"
        ) % {"mean": f"{float(load['runnable_mean']):g}", "max": load.get("runnable_max"), "cpus": load["cpus"],
             "busy": busy}))
    if clock in CLOCKS:
        rows.append((_("Clock"), str(CLOCKS[clock])))
    return rows


CLOCKS = {
    "cpu": gettext_lazy("the CPU time each side used plus the time it waited; other load cannot inflate it"),
    "wall": gettext_lazy("the wall clock (this sandbox shows no CPU time per task)"),
}


@register.simple_tag
def perf_words(case: Any) -> PerfWords:
    """Readable sentences for a verdict's performance case (workbench.verdicts.PerfCase)."""
    raw = case.raw if isinstance(case.raw, dict) else {}
    base = _baseline_name(str(raw.get("baseline") or "reference"))
    ratio, low, high = case.ratio, case.low, case.high
    if ratio is None or ratio <= 0:
        outcome = ""
    elif ratio < 0.95:
        outcome = _("Your code was about %(x)s× faster than %(base)s.") % {"x": _times(1 / ratio), "base": base}
    elif ratio > 1.05:
        outcome = _("Your code was about %(x)s× slower than %(base)s.") % {"x": _times(ratio), "base": base}
    else:
        outcome = _("Your code was about as fast as %(base)s.") % {"base": base}
    interval = ""
    if low is not None and high is not None:
        interval = _("95%% interval: your time is %(low)s to %(high)s of its time.") % {
            "low": f"{low:.0%}", "high": f"{high:.0%}"
        }
    speedup = raw.get("speedup")
    if speedup:
        needed = _("Needed: at least %(x)s× faster than %(base)s.") % {"x": f"{float(speedup):g}", "base": base}
    else:
        needed = _("Needed: at most %(x)s× the time of %(base)s.") % {"x": f"{case.at_most:g}", "base": base}
    details: list[tuple[str, str]] = []
    if case.n:
        details.append((_("Timed runs of each"), str(case.n)))
    set_up = (("student_compile_s", _("Your set-up time")),
              ("baseline_compile_s", _("Set-up time of %(base)s") % {"base": base}))
    for key, label in set_up:
        if isinstance(raw.get(key), int | float):
            details.append((label, messages.duration(float(raw[key]))))
    if isinstance(raw.get("elapsed_s"), int | float) and isinstance(raw.get("budget_s"), int | float):
        details.append((_("Measuring took"), _("%(used)s of %(budget)s allowed") % {
            "used": messages.duration(float(raw["elapsed_s"])), "budget": messages.duration(float(raw["budget_s"]))}))
    if isinstance(raw.get("confidence"), int | float):
        details.append((_("Confidence of the decision"), f"{float(raw['confidence']):.1%}"))
    details += measured_on(case.host, case.host_load, raw.get("clock"))
    return PerfWords(
        baseline=base,
        baseline_time_label=_("Time of %(base)s (median)") % {"base": base},
        outcome=outcome,
        interval=interval,
        needed=needed,
        details=details,
    )


@register.inclusion_tag("workbench/_hints.html", takes_context=True)
def exercise_hints(context: template.Context, exercise: Any) -> dict[str, Any]:
    """The exercise's hints box: those the student opened, and a button for the next."""
    request = context["request"]
    return {"hints": hints_of(request.user, exercise), "exercise": exercise, "csrf_token": context.get("csrf_token")}

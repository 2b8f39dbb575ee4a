"""Reading lessons: the learning path with a student's progress, one lesson's page, and the
data its visualisations play."""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import F, QuerySet

from accounts.models import User
from catalog.languages import language_key, localized
from catalog.models import Exercise
from grader.lessons import split_segments
from grader.lessons.traces import DEFAULT_FLOW_PROGRAM, all_execution_traces, compile_flow, expression_graph
from lessons.models import Lesson, LessonProgress
from quizzes.models import Question, QuizAttempt, Topic

# The short quiz counts as passed at this share of its points.
PASS_SHARE = 2 / 3


def lessons_published() -> QuerySet[Lesson]:
    return Lesson.objects.filter(retired=False, current_version__isnull=False).select_related("current_version")


def quiz_passed_slugs(user: User) -> set[str]:
    finished = QuizAttempt.objects.filter(user=user, status=QuizAttempt.Status.FINISHED,
                                          filters__has_key="lesson", max_score__gt=0,
                                          score__gte=F("max_score") * PASS_SHARE)
    return {attempt.filters["lesson"] for attempt in finished.only("filters")}


def learning_path(user: User) -> list[dict[str, Any]]:
    """Every lesson in path order with the student's progress and whether its prerequisites are done."""
    read = set(LessonProgress.objects.filter(user=user).values_list("lesson__slug", flat=True))
    passed = quiz_passed_slugs(user)
    lessons = list(lessons_published())
    titles = {lesson.slug: lesson.version.title for lesson in lessons}
    path = []
    for lesson in lessons:
        meta = lesson.version.meta
        missing = [titles.get(slug, slug) for slug in meta.get("prerequisites", []) if slug not in read]
        path.append({"lesson": lesson, "version": lesson.current_version, "read": lesson.slug in read,
                     "passed": lesson.slug in passed, "missing": missing, "quiz_size": len(meta.get("quiz", []))})
    return path


def lesson_page(lesson: Lesson, user: User) -> dict[str, Any]:
    """What the lesson template needs: segments in the active language, links, progress and viz data."""
    version = lesson.version
    meta = version.meta
    segments = page_segments(split_segments(version.body))
    titles = {other.slug: other.version.title
              for other in lessons_published().filter(slug__in=meta["prerequisites"])}
    exercises = [e for e in Exercise.objects.filter(slug__in=meta["exercises"], retired=False)
                 .select_related("current_version")]
    topics = list(Topic.objects.filter(uid__in=meta["topics"]))
    names = {s["text"] for s in segments if s["kind"] == "viz"}
    path = [entry["lesson"] for entry in learning_path(user)]
    position = next((i for i, other in enumerate(path) if other.pk == lesson.pk), None)
    return {
        "lesson": lesson, "version": version, "segments": segments,
        "prerequisites": [{"slug": slug, "title": titles.get(slug, slug)} for slug in meta["prerequisites"]],
        "exercises": exercises, "topics": topics, "interviews": meta.get("interviews", []),
        "quiz_size": len(meta.get("quiz", [])),
        "read": LessonProgress.objects.filter(user=user, lesson=lesson).exists(),
        "passed": lesson.slug in quiz_passed_slugs(user),
        "previous": path[position - 1] if position else None,
        "next": path[position + 1] if position is not None and position + 1 < len(path) else None,
        "viz": {name: viz_data(name, meta.get("data", {})) for name in names},
        "flow_program": DEFAULT_FLOW_PROGRAM,
        "expression": expression_picture() if "expression-graph" in names else None,
        **radar_table(meta.get("data", {}).get("radar", {})),
    }


def radar_table(radar: dict[str, Any]) -> dict[str, Any]:
    """The radar's scores and reasons as a table in the active language (the chart draws the same data)."""
    lang = language_key()
    axes = [axis["name"][lang] for axis in radar.get("axes", [])]
    rows = [{"name": f["name"][lang],
             "cells": [{"score": score, "why": why[lang]} for score, why in zip(f["scores"], f["why"], strict=True)]}
            for f in radar.get("frameworks", [])]
    return {"radar_axes": axes, "radar_rows": rows}


def page_segments(segments: list) -> list[dict[str, Any]]:
    """Segments as dicts; a ``questions`` segment carries its questions' text in the active language."""
    wanted = [uid for s in segments if s.kind == "questions" for uid in s.text.split()]
    found = Question.objects.filter(uid__in=wanted, retired=False).in_bulk(field_name="uid")
    result = []
    for segment in segments:
        item = segment.to_dict()
        if segment.kind == "questions":
            item["questions"] = [{"uid": uid, "text": localized(found[uid].spec["text"])}
                                 for uid in segment.text.split() if uid in found]
        result.append(item)
    return result


def viz_data(name: str, data: dict[str, Any]) -> dict[str, Any]:
    """The data one visualisation plays: engine traces, compile stages, or the lesson's own data file."""
    if name == "expression-graph":
        return expression_picture()
    if name == "static-vs-dynamic":
        return {"traces": execution_traces()}
    if name == "compile-flow":
        return {"program": DEFAULT_FLOW_PROGRAM, "flow": default_flow()}
    if name == "radar":
        return {**data.get("radar", {}), "measured": measured_benchmarks()}
    return dict(data.get(name, {}))


@functools.cache
def execution_traces() -> list[dict[str, Any]]:
    # Our own fixed programs on our own engines: recorded once per process, in-process.
    return all_execution_traces()


@functools.cache
def expression_picture() -> dict[str, Any]:
    return expression_graph()


@functools.cache
def default_flow() -> dict[str, Any]:
    return compile_flow(DEFAULT_FLOW_PROGRAM)


def measured_benchmarks() -> dict[str, Any]:
    """The engine benchmarks `make bench` last wrote, with where and when they were measured."""
    path = Path(settings.BASE_DIR) / "bench" / "results" / "engines.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    keep = ("ratio", "ci95", "median_slow_ms", "median_fast_ms", "decision", "compile_seconds", "torch", "threads")
    return {
        "environment": data.get("environment", {}),
        **{key: {k: v for k, v in data.get(key, {}).items() if k in keep}
           for key in ("static_vs_eager_mlp", "torch_anchor", "eager_dispatch", "memory_planning")},
    }


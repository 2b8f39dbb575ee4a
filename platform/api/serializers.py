"""What the API says about exercises, submissions and quizzes. Read-mostly: every write goes
through the same services as the pages."""

from __future__ import annotations

import html
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import strip_tags
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from grading.dispatch import SUBMISSION_JOB
from grading.jobs import Progress
from grading.services import submission_code_check
from workbench.messages import DIFFICULTY_ORDER
from workbench.verdicts import VerdictView, verdict_view


def _text(html_text: Any) -> str:
    """A message the pages show as HTML, as plain text."""
    return html.unescape(strip_tags(str(html_text)))


class ExerciseSerializer(serializers.Serializer):
    """An exercise as the list shows it (a workbench.selectors.ExerciseEntry)."""

    slug = serializers.SlugField(source="exercise.slug")
    title = serializers.CharField(source="version.title")
    summary = serializers.CharField(source="version.summary")
    difficulty = serializers.CharField(source="version.difficulty")
    tags = serializers.ListField(child=serializers.CharField(), source="version.tags")
    gpu = serializers.BooleanField(source="version.needs_gpu")
    state = serializers.ChoiceField(choices=["solved", "attempted", "new"], help_text="For the user asking")


class ExerciseDetailSerializer(ExerciseSerializer):
    statement = serializers.CharField(source="version.statement", help_text="Markdown")
    starter = serializers.CharField(source="version.starter")


# What grading.services.submission_code_check accepts, said in the schema so that a client
# (and schemathesis) learns it before the endpoint refuses: some text that is not all white
# space and has no NUL character.
CODE_PATTERN = r"^[^\x00]*[^\x00\s][^\x00]*$"


@extend_schema_field(
    {
        "type": "string",
        "pattern": CODE_PATTERN,
        "minLength": 1,
        "maxLength": settings.SUBMISSION_MAX_BYTES,
        "description": f"Python source: not empty, no NUL character, at most {settings.SUBMISSION_MAX_BYTES} bytes",
    }
)
class CodeField(serializers.CharField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, **kwargs)


class SubmitSerializer(serializers.Serializer):
    code = CodeField()

    def validate_code(self, code: str) -> str:
        try:
            submission_code_check(code)  # the pages' own rule and message
        except ValidationError as error:
            raise serializers.ValidationError(error.messages) from None
        return code


class ExerciseQuerySerializer(serializers.Serializer):
    """The exercise list's filters; a value outside them is refused, not read as "no filter"."""

    difficulty = serializers.ChoiceField(choices=list(DIFFICULTY_ORDER), required=False)
    tag = serializers.CharField(required=False, trim_whitespace=False)


class SubmissionQuerySerializer(serializers.Serializer):
    exercise = serializers.SlugField(required=False, help_text="Only this exercise's submissions")
    limit = serializers.IntegerField(min_value=1, max_value=100, required=False, default=20)


class BoardQuerySerializer(serializers.Serializer):
    page = serializers.IntegerField(min_value=1, max_value=1_000_000, required=False, default=1)


class CheckSerializer(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField()
    passed = serializers.BooleanField()
    visible = serializers.BooleanField()
    points = serializers.FloatField()
    max_points = serializers.FloatField()
    message = serializers.CharField()


class SubmissionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    exercise = serializers.SlugField(source="exercise_version.exercise.slug")
    status = serializers.ChoiceField(choices=["queued", "running", "measuring", "graded", "failed"])
    finished = serializers.SerializerMethodField()
    verdict = serializers.CharField(allow_blank=True)
    headline = serializers.SerializerMethodField()
    points = serializers.SerializerMethodField()
    max_points = serializers.SerializerMethodField()
    checks = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    url = serializers.SerializerMethodField()

    def _view(self, submission: Any) -> VerdictView | None:
        if not submission.result:
            return None
        cache = self.context.setdefault("views", {})
        if submission.pk not in cache:
            cache[submission.pk] = verdict_view(submission.result, submission.exercise_version.check_titles)
        return cache[submission.pk]

    @extend_schema_field(serializers.BooleanField())
    def get_finished(self, submission: Any) -> bool:
        return SUBMISSION_JOB.progress_of(submission).finished

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_headline(self, submission: Any) -> str | None:
        if SUBMISSION_JOB.progress_of(submission) is Progress.MEASURING:  # the one measure-again is pending
            return gettext("Measuring again: the machine was busy")
        view = self._view(submission)
        return _text(view.headline) if view else None

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_points(self, submission: Any) -> float | None:
        view = self._view(submission)
        return view.points if view else None

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_max_points(self, submission: Any) -> float | None:
        view = self._view(submission)
        return view.max_points if view else None

    @extend_schema_field(CheckSerializer(many=True))
    def get_checks(self, submission: Any) -> list[dict[str, Any]]:
        view = self._view(submission)
        if not view:
            return []
        return [
            {
                "name": c.name,
                "title": c.title,
                "passed": c.passed,
                "visible": c.visible,
                "points": c.points,
                "max_points": c.max_points,
                "message": _text(c.message),
            }
            for c in view.checks
        ]

    def get_url(self, submission: Any) -> str:
        """The submission's page on the site."""
        return self.context["request"].build_absolute_uri(reverse("submissions:detail", args=[submission.pk]))


class QuizBankSerializer(serializers.Serializer):
    uid = serializers.SlugField()
    title = serializers.CharField()
    description = serializers.CharField()
    question_count = serializers.IntegerField()
    time_limit_s = serializers.IntegerField(allow_null=True)


class BoardRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    shared = serializers.BooleanField(help_text="Others hold the same rank: noise cannot order them")
    name = serializers.CharField(help_text="The name the student shows on boards")
    score = serializers.FloatField()
    ratio = serializers.FloatField(allow_null=True, help_text="Time over the reference's, when timed")
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    is_you = serializers.BooleanField()


class BoardSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    rows = BoardRowSerializer(many=True)
    you = BoardRowSerializer(allow_null=True)

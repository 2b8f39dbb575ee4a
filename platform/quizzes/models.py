"""Question banks mirrored from exercises/quizzes/, quiz attempts and spaced repetition.

An attempt keeps a snapshot of every question as it was drawn (parameters, choice order and
the answer key), so later edits to a bank never change an attempt already taken.
"""
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from catalog.languages import chinese


class Topic(models.Model):
    question_count: int  # not a column: quizzes.selectors.topics_with_counts sets it for the pages

    uid = models.SlugField(max_length=80, unique=True)
    name_en = models.CharField(max_length=200)
    name_zh = models.CharField(max_length=200)
    study_en = models.TextField()
    study_zh = models.TextField()
    links = models.JSONField(default=list)

    class Meta:
        ordering = ["uid"]

    def __str__(self) -> str:
        return self.uid

    @property
    def name(self) -> str:
        return self.name_zh if chinese() else self.name_en

    @property
    def study(self) -> str:
        return self.study_zh if chinese() else self.study_en


class Bank(models.Model):
    uid = models.SlugField(max_length=80, unique=True)
    source = models.CharField(max_length=200, help_text="File under exercises/")
    title_en = models.CharField(max_length=200)
    title_zh = models.CharField(max_length=200)
    description_en = models.TextField()
    description_zh = models.TextField()
    time_limit_s = models.PositiveIntegerField(null=True, blank=True)
    question_uids = models.JSONField(default=list, help_text="The bank's questions, in file order")
    retired = models.BooleanField(default=False)

    class Meta:
        ordering = ["title_en"]

    def __str__(self) -> str:
        return self.uid

    @property
    def title(self) -> str:
        return self.title_zh if chinese() else self.title_en

    @property
    def description(self) -> str:
        return self.description_zh if chinese() else self.description_en


class Question(models.Model):
    uid = models.SlugField(max_length=80, unique=True)
    bank = models.ForeignKey(Bank, on_delete=models.PROTECT, related_name="questions")
    type = models.CharField(max_length=20)
    difficulty = models.CharField(max_length=10, db_index=True)
    topic = models.CharField(max_length=80, db_index=True)
    frameworks = models.JSONField(default=list)
    pitfall = models.CharField(max_length=80, blank=True)
    has_code = models.BooleanField(default=False)
    spec = models.JSONField(help_text="grader.quizzes.Question.to_dict()")
    digest = models.CharField(max_length=64)
    retired = models.BooleanField(default=False)

    class Meta:
        ordering = ["uid"]

    def __str__(self) -> str:
        return self.uid


class Attempt(models.Model):
    """What a quiz attempt and a mock interview share: questions drawn from a seed, a clock,
    and a status that goes from open to finished or expired, never back."""

    class Status(models.TextChoices):
        OPEN = "open", _("In progress")
        FINISHED = "finished", _("Finished")
        EXPIRED = "expired", _("Time ran out")

    seed = models.BigIntegerField()
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN, db_index=True)

    class Meta:
        abstract = True
        ordering = ["-started_at", "-id"]

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN


class AnsweredItem(models.Model):
    """One question of an attempt (a quiz's or an interview's): its place, the question as it
    was drawn, and the answer given; quizzes.services.answer_record marks it."""

    position = models.PositiveSmallIntegerField()
    snapshot: Any  # a JSONField each kind declares: a quiz item always has one, an interview's coding item none
    response = models.JSONField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    correct = models.BooleanField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["attempt", "position"]


class QuizAttempt(Attempt):
    title: str  # not a column: the quiz home page sets it (quizzes.selectors.attempt_title)

    class Kind(models.TextChoices):
        BANK = "bank", _("Fixed quiz")
        CUSTOM = "custom", _("Practice by topic")
        REVIEW = "review", _("Review of missed questions")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="quiz_attempts")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    bank = models.ForeignKey(Bank, null=True, blank=True, on_delete=models.PROTECT, related_name="attempts")
    filters = models.JSONField(default=dict, blank=True, help_text="Topic and difficulty of a custom quiz")
    deadline = models.DateTimeField(null=True, blank=True, help_text="Held here; the page only shows it")
    score = models.FloatField(null=True, blank=True)
    max_score = models.FloatField(default=0)

    def __str__(self) -> str:
        return f"quiz #{self.pk} by {self.user}"

    @property
    def percent(self) -> int | None:
        return None if self.score is None or not self.max_score else round(100 * self.score / self.max_score)


class AttemptItem(AnsweredItem):
    attempt = models.ForeignKey(QuizAttempt, on_delete=models.CASCADE, related_name="items")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="+")
    snapshot = models.JSONField(help_text="grader.quizzes.instantiate(): text, choices and the answer key")

    class Meta(AnsweredItem.Meta):
        constraints = [models.UniqueConstraint(fields=["attempt", "position"], name="unique_item_position")]

    def __str__(self) -> str:
        return f"{self.attempt} #{self.position}: {self.question.uid}"


class ReviewState(models.Model):
    """Leitner boxes: a miss sends a question to box 1 (due at once); each later right
    answer moves it up a box and further into the future; past the last box it is learnt."""
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_states")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    box = models.PositiveSmallIntegerField(default=1)
    due_at = models.DateTimeField(null=True, blank=True, help_text="None once learnt")
    misses = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "question"], name="unique_review_state")]
        indexes = [models.Index(fields=["user", "due_at"])]

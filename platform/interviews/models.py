"""Mock-interview templates mirrored from exercises/interviews/, and attempts at them.

An attempt is planned in full when it starts (which questions, in which order, from the
attempt's seed) and moves forward one item at a time; the server holds both the interview's
deadline and the current section's.
"""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from catalog.languages import chinese, localized
from quizzes.models import AnsweredItem, Attempt


class InterviewTemplate(models.Model):
    uid = models.SlugField(max_length=80, unique=True)
    source = models.CharField(max_length=200)
    title_en = models.CharField(max_length=200)
    title_zh = models.CharField(max_length=200)
    description_en = models.TextField()
    description_zh = models.TextField()
    duration_s = models.PositiveIntegerField()
    spec = models.JSONField(help_text="dataclasses.asdict(grader.quizzes.InterviewTemplate)")
    digest = models.CharField(max_length=64)
    retired = models.BooleanField(default=False)

    class Meta:
        ordering = ["duration_s", "uid"]

    def __str__(self) -> str:
        return self.uid

    @property
    def title(self) -> str:
        return self.title_zh if chinese() else self.title_en

    @property
    def description(self) -> str:
        return self.description_zh if chinese() else self.description_en

    @property
    def sections(self) -> list[dict]:
        return self.spec["sections"]


class InterviewAttempt(Attempt):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="interview_attempts")
    template = models.ForeignKey(InterviewTemplate, on_delete=models.PROTECT, related_name="attempts")
    spec = models.JSONField(help_text="The template as it was when the attempt started")
    deadline = models.DateTimeField()
    current = models.PositiveSmallIntegerField(default=1, help_text="Position of the item on screen")
    section = models.PositiveSmallIntegerField(default=0)
    section_deadline = models.DateTimeField()

    def __str__(self) -> str:
        return f"interview #{self.pk} ({self.template_id}) by {self.user}"

    @property
    def current_section(self) -> dict:
        return self.spec["sections"][self.section]

    @property
    def section_title(self) -> str:
        return localized(self.current_section["title"])


class InterviewItem(AnsweredItem):
    class Kind(models.TextChoices):
        QUESTION = "question", _("Question")
        CODING = "coding", _("Coding exercise")
        OPEN = "open", _("Open-ended question")  # response: {"text": the answer, "rubric": ticked line ids}

    attempt = models.ForeignKey(InterviewAttempt, on_delete=models.CASCADE, related_name="items")
    section = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=10, choices=Kind.choices)
    question = models.ForeignKey("quizzes.Question", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    exercise = models.ForeignKey("catalog.Exercise", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    snapshot = models.JSONField(default=dict, blank=True,
                                help_text="Questions: grader.quizzes.instantiate(); open items: the prompt")
    submission = models.ForeignKey("grading.Submission", null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    max_points = models.FloatField(default=1)

    class Meta(AnsweredItem.Meta):
        constraints = [models.UniqueConstraint(fields=["attempt", "position"], name="unique_interview_position")]

    def __str__(self) -> str:
        return f"{self.attempt} #{self.position}"

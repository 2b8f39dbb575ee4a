from collections.abc import Iterable
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from grader.quizzes import DIFFICULTIES
from quizzes.models import Topic
from quizzes.services import MAX_QUIZ_QUESTIONS

# The difficulties are the grader's; a new one without a label here fails at import, loudly.
DIFFICULTY_LABELS = {"easy": _("Easy"), "medium": _("Medium"), "hard": _("Hard")}
DIFFICULTY_CHOICES = [("", _("Any difficulty"))] + [(level, DIFFICULTY_LABELS[level]) for level in DIFFICULTIES]
TIMER_CHOICES = [("", _("No time limit")), ("5", _("5 minutes")), ("10", _("10 minutes")),
                 ("15", _("15 minutes")), ("30", _("30 minutes"))]


class CustomQuizForm(forms.Form):
    topic = forms.ChoiceField(label=_("Topic"), required=False)
    difficulty = forms.ChoiceField(label=_("Difficulty"), choices=DIFFICULTY_CHOICES, required=False)
    count = forms.IntegerField(label=_("Questions"), min_value=1, max_value=MAX_QUIZ_QUESTIONS, initial=10)
    minutes = forms.ChoiceField(label=_("Timer"), choices=TIMER_CHOICES, required=False)

    def __init__(self, *args: Any, topics: Iterable[Topic] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        topic = self.fields["topic"]
        assert isinstance(topic, forms.ChoiceField)
        topic.choices = [("", _("All topics"))] + [(t.uid, t.name) for t in topics]

    @property
    def time_limit_s(self) -> int | None:
        minutes = self.cleaned_data.get("minutes")
        return int(minutes) * 60 if minutes else None

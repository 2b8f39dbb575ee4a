from typing import Any

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from catalog.models import Exercise
from catalog.selectors import exercises_published
from courses.models import Assignment, AssignmentItem, Course
from interviews.models import InterviewTemplate
from quizzes.models import Bank


class _EnglishTitleEnough(forms.ModelForm):
    """A Chinese title is welcome, not required: without one the English title is shown."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["title_zh"].required = False
        self.fields["title_zh"].help_text = _("Optional: the English title is shown when it is empty.")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # what Django's clean() returns; its stub allows an override's None
        if not data.get("title_zh") and data.get("title_en"):
            data["title_zh"] = data["title_en"]
        return data


class CourseForm(_EnglishTitleEnough):
    class Meta:
        model = Course
        fields = ("title_en", "title_zh", "term")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["term"].required = False


class JoinForm(forms.Form):
    code = forms.CharField(label=_("Join code"), max_length=12)


class RosterForm(forms.Form):
    roster = forms.FileField(label=_("Roster (CSV: username, email, name)"))


class CoursePseudonymForm(forms.Form):
    pseudonym = forms.CharField(max_length=40, label=_("Your name on this course's leaderboards"))


class InvitationSignUpForm(UserCreationForm):
    """A new account for an invited address: the name and password are the student's to choose."""

    class Meta:
        model = User
        fields = ("username",)


class AssistantForm(forms.Form):
    who = forms.EmailField(label=_("Assistant's email"), max_length=254)


class AssignmentForm(_EnglishTitleEnough):
    class Meta:
        model = Assignment
        fields = ("title_en", "title_zh", "opens_at", "due_at", "late_policy", "penalty_per_day")
        widgets = {
            "opens_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
            "due_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("opens_at") and data.get("due_at") and data["due_at"] <= data["opens_at"]:
            self.add_error("due_at", _("The due time must come after the opening time."))
        return data


class TitledChoiceField(forms.ModelChoiceField):
    """Choices by their title in the reader's language, not by their slug."""

    def label_from_instance(self, obj: Exercise | Bank | InterviewTemplate) -> str:
        version = getattr(obj, "current_version", None)
        return str(version.title if version is not None else getattr(obj, "title", obj))


class ItemForm(forms.Form):
    exercise = TitledChoiceField(queryset=exercises_published(), required=False, label=_("Coding exercise"))
    bank = TitledChoiceField(queryset=Bank.objects.filter(retired=False), required=False, label=_("Quiz"))
    interview = TitledChoiceField(
        queryset=InterviewTemplate.objects.filter(retired=False), required=False, label=_("Mock interview")
    )
    points = forms.IntegerField(min_value=1, max_value=1000, initial=10, label=_("Points"))

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        chosen = [
            (kind, data.get(name))
            for kind, name in (
                (AssignmentItem.Kind.EXERCISE, "exercise"),
                (AssignmentItem.Kind.QUIZ, "bank"),
                (AssignmentItem.Kind.INTERVIEW, "interview"),
            )
            if data.get(name)
        ]
        if not chosen:
            raise forms.ValidationError(_("Pick an exercise, a quiz or a mock interview for this item."))
        if len(chosen) > 1:
            raise forms.ValidationError(
                _("You picked %(n)s things; an item is one of them. Add the others as items of their own.")
                % {"n": len(chosen)}
            )
        data["kind"], data["target"] = chosen[0]
        return data


class OverrideForm(forms.Form):
    item = forms.IntegerField(widget=forms.HiddenInput)
    student = forms.IntegerField(widget=forms.HiddenInput)
    points = forms.FloatField(required=False, min_value=0, label=_("Points (empty removes the override)"))
    reason = forms.CharField(max_length=1000, label=_("Why"))

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import User
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
    """Open and due times are typed as wall-clock times in ``time_zone`` (the instructor's, which
    the page fills in; UTC without JavaScript) and stored in UTC."""

    time_zone = forms.CharField(widget=forms.HiddenInput, required=False, initial="UTC")

    class Meta:
        model = Assignment
        fields = ("title_en", "title_zh", "opens_at", "due_at", "late_policy", "penalty_per_day")
        widgets = {
            "opens_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
            "due_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        }

    def clean_time_zone(self) -> ZoneInfo:
        name = self.cleaned_data.get("time_zone") or "UTC"
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise forms.ValidationError(_("Unknown time zone %(zone)s."), params={"zone": name}) from None

    def clean(self):
        data = super().clean()
        # The model gets UTC; the time zone was only how the times were written.
        zone = data.pop("time_zone", None)
        for name in ("opens_at", "due_at"):
            if data.get(name) and zone is not None:
                data[name] = timezone.make_aware(timezone.make_naive(data[name], dt.UTC), zone).astimezone(dt.UTC)
        if data.get("opens_at") and data.get("due_at") and data["due_at"] <= data["opens_at"]:
            self.add_error("due_at", _("The due time must come after the opening time."))
        return data


NOTHING_PICKED = _("Pick an exercise, a quiz or a mock interview for this item.")


def by_title(choice: tuple[str, str]) -> str:
    return choice[1].casefold()


class ItemForm(forms.Form):
    """One picker for whatever the item is: a coding exercise, a quiz or a mock interview,
    grouped by kind and searchable on the page (courses/item_picker.js)."""

    item = forms.ChoiceField(
        label=_("Exercise, quiz or mock interview"),
        widget=forms.Select(attrs={"size": 10}),
        error_messages={"required": NOTHING_PICKED, "invalid_choice": NOTHING_PICKED},
    )
    points = forms.IntegerField(min_value=1, max_value=1000, initial=10, label=_("Points"))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.targets = item_targets()
        kinds = dict(AssignmentItem.Kind.choices)
        item = self.fields["item"]
        assert isinstance(item, forms.ChoiceField)
        # No empty choice: the list box starts with nothing picked, and nothing picked says so.
        item.choices = [
            (kinds[kind], sorted(((key, target_title(target)) for key, target in options.items()), key=by_title))
            for kind, options in self.targets.items()
            if options
        ]

    def clean_item(self) -> str:
        kind = self.cleaned_data["item"].partition(":")[0]
        target = self.targets.get(kind, {}).get(self.cleaned_data["item"])
        if target is None:
            raise forms.ValidationError(NOTHING_PICKED)
        self.cleaned_data["kind"], self.cleaned_data["target"] = kind, target
        return self.cleaned_data["item"]


def target_title(target: object) -> str:
    """A choice by its title in the reader's language, not by its slug."""
    version = getattr(target, "current_version", None)
    return str(version.title if version is not None else getattr(target, "title", target))


def item_targets() -> dict[str, dict[str, object]]:
    """What an item may name, by kind, keyed "kind:slug" so that the picker's value says both."""
    return {
        AssignmentItem.Kind.EXERCISE: {f"exercise:{e.slug}": e for e in exercises_published()},
        AssignmentItem.Kind.QUIZ: {f"quiz:{b.uid}": b for b in Bank.objects.filter(retired=False)},
        AssignmentItem.Kind.INTERVIEW: {
            f"interview:{t.uid}": t for t in InterviewTemplate.objects.filter(retired=False)
        },
    }


class OverrideForm(forms.Form):
    item = forms.IntegerField(widget=forms.HiddenInput)
    student = forms.IntegerField(widget=forms.HiddenInput)
    points = forms.FloatField(required=False, min_value=0, label=_("Points (empty removes the override)"))
    reason = forms.CharField(max_length=1000, label=_("Why"))

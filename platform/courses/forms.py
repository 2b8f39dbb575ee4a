from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from catalog.selectors import exercises_published
from courses.models import Assignment, AssignmentItem, Course
from interviews.models import InterviewTemplate
from quizzes.models import Bank


class CourseForm(forms.ModelForm):
    class Meta:
        model = Course
        fields = ("title_en", "title_zh", "term")


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


class AssignmentForm(forms.ModelForm):
    class Meta:
        model = Assignment
        fields = ("title_en", "title_zh", "opens_at", "due_at", "late_policy", "penalty_per_day")
        widgets = {
            "opens_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
            "due_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        }

    def clean(self):
        data = super().clean()
        if data.get("opens_at") and data.get("due_at") and data["due_at"] <= data["opens_at"]:
            self.add_error("due_at", _("The due time must come after the opening time."))
        return data


class ItemForm(forms.Form):
    exercise = forms.ModelChoiceField(queryset=exercises_published(), required=False, label=_("Coding exercise"))
    bank = forms.ModelChoiceField(queryset=Bank.objects.filter(retired=False), required=False, label=_("Quiz"))
    interview = forms.ModelChoiceField(
        queryset=InterviewTemplate.objects.filter(retired=False), required=False, label=_("Mock interview")
    )
    points = forms.IntegerField(min_value=1, max_value=1000, initial=10, label=_("Points"))

    def clean(self):
        data = super().clean()
        chosen = [
            (kind, data.get(name))
            for kind, name in (
                (AssignmentItem.Kind.EXERCISE, "exercise"),
                (AssignmentItem.Kind.QUIZ, "bank"),
                (AssignmentItem.Kind.INTERVIEW, "interview"),
            )
            if data.get(name)
        ]
        if len(chosen) != 1:
            raise forms.ValidationError(_("Choose exactly one exercise, quiz or interview."))
        data["kind"], data["target"] = chosen[0]
        return data


class OverrideForm(forms.Form):
    item = forms.IntegerField(widget=forms.HiddenInput)
    student = forms.IntegerField(widget=forms.HiddenInput)
    points = forms.FloatField(required=False, min_value=0, label=_("Points (empty removes the override)"))
    reason = forms.CharField(max_length=1000, label=_("Why"))

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from accounts.models import User


class SignUpForm(UserCreationForm):
    email = forms.EmailField(label=_("Email"), help_text=_("Only to reset a forgotten password."))

    class Meta:
        model = User
        fields = ("username", "email", "first_name", "last_name")

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip().lower()
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError(_("An account with this email exists already; reset its password instead."))
        return email


class BoardIdentityForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ("pseudonym", "hide_from_public_boards")
        help_texts = {
            "pseudonym": _(
                "What other students see on site-wide leaderboards. Each course has a name of its own for you "
                "(on the course's page); instructors see your real name in their course."
            )
        }

    def clean_pseudonym(self) -> str:
        name = self.cleaned_data["pseudonym"].strip()
        if len(name) < 3:
            raise forms.ValidationError(_("Choose at least 3 characters."))
        if User.objects.filter(pseudonym__iexact=name).exclude(pk=self.instance.pk).exists():
            raise forms.ValidationError(_("Someone else goes by this name already."))
        return name

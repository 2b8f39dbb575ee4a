import uuid

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _


class SubmissionForm(forms.Form):
    code = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false", "class": "code-editor"}),
        strip=False,
        error_messages={"required": _("Your submission is empty: write some code first.")},
    )
    # A fresh key with every page: posting the same page twice stores one submission.
    idempotency_key = forms.CharField(widget=forms.HiddenInput, required=False, max_length=64,
                                      initial=lambda: uuid.uuid4().hex)

    def clean_code(self) -> str:
        code = self.cleaned_data["code"]
        size = len(code.encode("utf-8"))
        if size > settings.SUBMISSION_MAX_BYTES:
            raise forms.ValidationError(
                _("Your code is %(size)s bytes; the limit is %(limit)s bytes."),
                params={"size": size, "limit": settings.SUBMISSION_MAX_BYTES},
            )
        if not code.strip():
            raise forms.ValidationError(_("Your submission is empty: write some code first."))
        return code

import uuid

from django import forms


class SubmissionForm(forms.Form):
    """The code editor. Whether code can be graded is grading.services' call (one message for
    size, emptiness and encoding), so this field checks nothing: a plain Field, not a
    CharField, whose own NUL check would answer first."""

    code = forms.Field(
        widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false", "class": "code-editor"}),
        required=False,
    )
    # A fresh key with every page: posting the same page twice stores one submission.
    idempotency_key = forms.CharField(widget=forms.HiddenInput, required=False, max_length=64,
                                      initial=lambda: uuid.uuid4().hex)

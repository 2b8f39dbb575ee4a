from django import forms


class SubmissionForm(forms.Form):
    """The code editor. Whether code can be graded is grading.services' call (one message for
    size, emptiness and encoding), so this field checks nothing: a plain Field, not a
    CharField, whose own NUL check would answer first."""

    code = forms.Field(
        widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false", "class": "code-editor"}),
        required=False,
    )

from django import forms
from django.utils.translation import gettext_lazy as _

from grader.host import ARCHIVE_LIMITS


class ExerciseUploadForm(forms.Form):
    archive = forms.FileField(
        label=_("Exercise folder as a .zip"),
        help_text=_(
            "Zip the exercise folder itself: exercise.toml, the two statements, starter.py, solution.py, checks.py "
            "and mutants/."
        ),
    )

    def clean_archive(self):
        archive = self.cleaned_data["archive"]
        if archive.size > ARCHIVE_LIMITS.archive_bytes:
            raise forms.ValidationError(
                _("The archive is %(size)s bytes; the limit is %(limit)s."),
                params={"size": archive.size, "limit": ARCHIVE_LIMITS.archive_bytes},
            )
        return archive

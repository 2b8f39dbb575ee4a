"""Check titles stored on each version at publish; versions published before are filled once
from their stored checks.py, so verdict pages never read checks.py again."""

from typing import Any

from django.db import migrations, models

from grader.host import SpecError, check_titles


def fill_check_titles(apps: Any, schema_editor: Any) -> None:
    ExerciseVersion = apps.get_model("catalog", "ExerciseVersion")
    for version in ExerciseVersion.objects.only("id", "files").iterator():
        try:
            titles = check_titles((version.files or {}).get("checks.py", ""))
        except (SpecError, SyntaxError):
            titles = {}  # a version whose checks.py cannot be read keeps its checks' names
        ExerciseVersion.objects.filter(id=version.id).update(check_titles=titles)


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0002_exercise_upload'),
    ]

    operations = [
        migrations.AddField(
            model_name='exerciseversion',
            name='check_titles',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(fill_check_titles, migrations.RunPython.noop),
    ]

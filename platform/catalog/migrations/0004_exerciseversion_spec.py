"""The validated exercise spec stored on each version at publish. Versions published before
are loaded (and so validated) once here from their stored files; one that no longer loads
keeps None and is loaded from its files when it is graded, as before."""

import tempfile
from pathlib import Path
from typing import Any

from django.db import migrations, models

from grader.host import SpecError, load_exercise, stored_spec


def fill_specs(apps: Any, schema_editor: Any) -> None:
    ExerciseVersion = apps.get_model("catalog", "ExerciseVersion")
    for version in ExerciseVersion.objects.select_related("exercise").iterator():
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / version.exercise.slug  # the spec's slug is its folder's name
            for relative, text in (version.files or {}).items():
                target = (folder / relative).resolve()
                if not target.is_relative_to(folder.resolve()):
                    break
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            else:
                try:
                    spec = stored_spec(load_exercise(folder))
                except (SpecError, OSError, UnicodeError):
                    continue
                # The digest is the one it was published under, not this folder's.
                ExerciseVersion.objects.filter(id=version.id).update(spec={**spec, "digest": version.digest})


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0003_exerciseversion_check_titles'),
    ]

    operations = [
        migrations.AddField(
            model_name='exerciseversion',
            name='spec',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RunPython(fill_specs, migrations.RunPython.noop),
    ]

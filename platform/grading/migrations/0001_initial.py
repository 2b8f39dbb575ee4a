"""Submission moves here from the submissions app. Its table keeps its name, so on a database
migrated before the move no row moves: this migration changes Django's state only, and the
content type (with its permissions and admin history) follows the model."""
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def content_type_follows(apps, schema_editor):
    _content_type_rename(apps, "submissions", "grading")


def content_type_returns(apps, schema_editor):
    _content_type_rename(apps, "grading", "submissions")


def _content_type_rename(apps, old: str, new: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    if not ContentType.objects.filter(app_label=new, model="submission").exists():
        ContentType.objects.filter(app_label=old, model="submission").update(app_label=new)


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("catalog", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("submissions", "0001_initial"),  # it created the table this model keeps
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="Submission",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("code", models.TextField()),
                        ("status", models.CharField(choices=[("queued", "Queued"), ("running", "Running"), ("graded", "Graded"), ("failed", "Could not be graded")], db_index=True, default="queued", max_length=16)),
                        ("verdict", models.CharField(blank=True, choices=[("ACCEPTED", "ACCEPTED"), ("PARTIAL", "PARTIAL"), ("WRONG_ANSWER", "WRONG_ANSWER"), ("TOO_SLOW", "TOO_SLOW"), ("TIME_LIMIT", "TIME_LIMIT"), ("MEMORY_LIMIT", "MEMORY_LIMIT"), ("OUTPUT_LIMIT", "OUTPUT_LIMIT"), ("RUNTIME_ERROR", "RUNTIME_ERROR"), ("SYNTAX_ERROR", "SYNTAX_ERROR"), ("INTERNAL_ERROR", "INTERNAL_ERROR")], max_length=20)),
                        ("score", models.FloatField(blank=True, null=True)),
                        ("result", models.JSONField(blank=True, help_text="The grader's verdict document", null=True)),
                        ("attempts", models.PositiveSmallIntegerField(default=0)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("exercise_version", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="submissions", to="catalog.exerciseversion")),
                        ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="submissions", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "submissions_submission",
                        "ordering": ["-created_at", "-id"],
                        "indexes": [models.Index(fields=["user", "exercise_version"], name="submissions_user_id_36ae6a_idx")],
                    },
                ),
            ],
        ),
        migrations.RunPython(content_type_follows, content_type_returns),
    ]

"""Submission now belongs to the grading app (grading/migrations/0001_initial.py); the table
and its rows stay where they are, so this forgets the model in Django's state only."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("grading", "0001_initial"),
        ("interviews", "0002_item_submission_in_grading"),  # nothing may point at it any more
        ("submissions", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[migrations.DeleteModel(name="Submission")],
        ),
    ]

from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    """The history of the submissions table alone: Submission began here and now belongs to
    grading (its table keeps the name submissions_submission), and the pages moved to workbench;
    the migrations stay so that every database keeps the record of how the table came to be."""

    name = "submissions"

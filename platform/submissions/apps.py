from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    """The history of the submissions table, nothing else: the model is grading's, the pages workbench's.

    Submission began here and moved to grading, its table keeping the name submissions_submission;
    the migrations stay so that every database keeps the record of how the table came to be."""

    name = "submissions"

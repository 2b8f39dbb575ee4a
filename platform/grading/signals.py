"""Signals of the grading app."""
from django.dispatch import Signal

# Sent with sender=Submission, submission=<the row as stored> inside the transaction that
# stores a verdict (GRADED or FAILED): a receiver's writes commit or roll back with it.
submission_graded = Signal()

"""Sent inside the transaction that stores a verdict, so receivers (best-per-student rows,
gradebook scores) commit or roll back with it. Receivers must stay O(1) in submissions."""
import django.dispatch

# sender=Submission, submission=<the graded Submission>
submission_graded = django.dispatch.Signal()

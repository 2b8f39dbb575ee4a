"""Recording a best entry must not lock the exercise version: every submit to that version
takes a key-share lock on its row at commit (the foreign-key check), so a lock there made a
worker storing a verdict and a student submitting deadlock (seen in CI, test_multihost)."""
import threading

import pytest
from django.db import connection, transaction

from grading.models import Submission
from leaderboards.services import entry_record
from tests.platform import classroom as make

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_submit_commits_while_a_verdict_holds_the_students_entry():
    ex = make.exercise()
    graded_student, submitter = make.user("graded"), make.user("submitter")
    earlier = make.graded(graded_student, ex, ratio=1.0, code="v1")
    holding, release = threading.Event(), threading.Event()

    def store_a_verdict():  # as the worker does, and then keep the transaction open
        try:
            with transaction.atomic():
                entry_record(earlier)
                holding.set()
                release.wait(10)
        finally:
            connection.close()

    worker = threading.Thread(target=store_a_verdict)
    worker.start()
    try:
        assert holding.wait(10)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '2s'")
            Submission.objects.create(user=submitter, exercise_version=ex.current_version, code="x = 1\n")
        # Before the fix the commit above waited on the version row and timed out here.
    finally:
        release.set()
        worker.join(10)
    assert Submission.objects.filter(user=submitter).count() == 1

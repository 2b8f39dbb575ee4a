"""One writer of the SQLite load test (test_sqlite.py), run as its own process as the site's
and the worker's processes are: ``python -m tests.platform.sqlite_load ROLE COUNT USER``.

Prints one line per error and exits 1 if there was any; a "database is locked" is one."""
from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import django

VERDICT = Path(__file__).parent / "workbench" / "verdicts" / "accepted.json"


def main(role: str, count: int, username: str) -> int:
    django.setup()
    from accounts.models import User
    from catalog.models import Exercise
    from grading.dispatch import SUBMISSION_JOB
    from grading.jobs import Claim, Job, job_claim, job_store
    from grading.models import Submission
    from grading.services import submission_create
    from grading.work import submission_verdict
    from workbench.services import draft_save

    exercise = Exercise.objects.get(slug="tiny-answer")
    user = User.objects.get(username=username)
    result = json.loads(VERDICT.read_text())
    errors = 0
    done = 0
    while done < count:
        try:
            if role == "drafts":
                draft_save(user=user, exercise=exercise, code=f"def answer():\n    return {done}\n")
            elif role == "submits":
                submission_create(user=user, exercise=exercise, code=f"def answer():\n    return {done}\n")
            else:  # verdicts: what the worker writes, claim then store, for anyone's queued row
                queued = Submission.objects.filter(status=Submission.Status.QUEUED).order_by("id").first()
                if queued is not None:
                    claim, attempt = job_claim(SUBMISSION_JOB, queued.id)
                    if claim is Claim.TAKEN:
                        job_store(Job(SUBMISSION_JOB, queued.id, attempt), submission_verdict(result))
                else:
                    draft_save(user=user, exercise=exercise, code=f"# idle {done}\n")
        except Exception as error:  # noqa: BLE001 - every error is the test's finding
            errors += 1
            print(f"ERROR {role}: {error!r}", flush=True)
            traceback.print_exc()
        done += 1
    print(f"DONE {role} {done} errors={errors}", flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))

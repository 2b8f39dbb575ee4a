"""The work of a grading and of an upload's validation: what each runs in the sandbox and
what it stores. Claim, lease, retry and store are the one job path's (grading.jobs)."""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

from catalog.models import ExerciseUpload
from catalog.services import upload_folder
from grader.host import Sandbox, grade, validate_exercise
from grading.dispatch import SUBMISSION_JOB, UPLOAD_JOB
from grading.exercises import exercise_version_spec
from grading.jobs import Claim, Job, Outcome, PlatformFault, job_run
from grading.measure_again import attempt_for, measure_again_later
from grading.models import Submission
from grading.results import result_is_internal_error, result_of
from grading.sandboxes import grading_sandbox

log = logging.getLogger(__name__)


def submission_grade(*, submission_id: int, final_attempt: bool = True) -> Claim:
    """Grade one submission by the job path's rule: an INTERNAL_ERROR is retried, and on the
    final attempt stored FAILED, never a verdict charged to the student."""
    return job_run(SUBMISSION_JOB, submission_id, _grade, final_attempt=final_attempt)


def _grade(job: Job) -> Outcome:
    submission = Submission.objects.select_related("exercise_version").get(id=job.id)
    spec = exercise_version_spec(submission.exercise_version)
    result = result_of(grade(spec, submission.code, grading_sandbox(), attempt=attempt_for(submission)))
    if result_is_internal_error(result):
        raise PlatformFault(f"INTERNAL_ERROR: {result.get('notes')}", result)
    if result.get("unsettled") and submission.measure_again_at is None:
        return measure_again_later(submission, result)  # MEASURING, counted nowhere; its last attempt comes later
    return submission_verdict(result)


def submission_verdict(result: dict[str, Any]) -> Outcome:
    """What a grading that reached a verdict stores (the receivers are told by the job's kind)."""
    return Outcome({"status": Submission.Status.GRADED, "verdict": result["verdict"], "score": result["score"],
                    "result": result})


def upload_validate(*, upload_id: int, sandbox: Sandbox | None = None, final_attempt: bool = True) -> ExerciseUpload:
    """Prove an uploaded exercise in the sandbox, exactly as validate_content proves a folder."""
    job_run(UPLOAD_JOB, upload_id, lambda job: _validate(job, sandbox or grading_sandbox()),
            final_attempt=final_attempt)
    return ExerciseUpload.objects.get(id=upload_id)


def _validate(job: Job, sandbox: Sandbox) -> Outcome:
    upload = ExerciseUpload.objects.get(id=job.id)
    with tempfile.TemporaryDirectory(prefix="upload-") as tmp:
        report = validate_exercise(upload_folder(upload, Path(tmp)), sandbox)
    if report.fault:  # a run the platform failed proves nothing about the upload
        raise PlatformFault(report.fault)
    ok = report.ok and not report.skipped
    return Outcome({"report": report.to_dict(), "error": report.skipped or report.error,
                    "status": ExerciseUpload.Status.VALID if ok else ExerciseUpload.Status.INVALID})

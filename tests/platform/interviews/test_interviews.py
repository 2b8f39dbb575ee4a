"""Mock interviews as a candidate meets them: one step at a time, two clocks, the coding step
through the normal submission pipeline, and a scorecard compared with earlier attempts."""
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from catalog.services import content_sync
from grading.models import Submission
from interviews.models import InterviewAttempt, InterviewTemplate
from interviews.services import interview_start, interview_templates_sync
from quizzes.services import quiz_content_sync

pytestmark = pytest.mark.django_db
SCREEN = "ml-systems-screen-30"
DEEP_DIVE = "autograd-and-compilers-20"
DESIGN = "systems-design-and-diagnosis-40"


@pytest.fixture
def synced(content_dir, settings, tmp_path):
    settings.EXERCISE_CACHE_DIR = tmp_path / "exercise-cache"
    assert not content_sync(content_dir).errors
    quizzes = quiz_content_sync(content_dir)
    report = interview_templates_sync(content=quizzes.content)
    assert not quizzes.errors and not report.errors, (quizzes.errors, report.errors)
    assert sorted(report.synced) == [DEEP_DIVE, SCREEN, DESIGN]


@pytest.fixture
def candidate(make_user):
    return make_user("grace")


@pytest.fixture
def candidate_client(client, candidate):
    client.force_login(candidate)
    return client


def start(client, uid=SCREEN) -> InterviewAttempt:
    response = client.post(reverse("interviews:start", args=[uid]))
    attempt = InterviewAttempt.objects.latest("id")
    assert response.url == reverse("interviews:attempt", args=[attempt.pk])
    return attempt


def answer(client, attempt, position, fields=None):
    return client.post(reverse("interviews:answer", args=[attempt.pk]), {"position": position, **(fields or {})})


def unfit(item) -> dict:
    """A form the item's question cannot take, whatever its type (a tampered page)."""
    kind, ids = item.snapshot["type"], [c["id"] for c in item.snapshot["choices"]]
    if kind == "ordering":
        return {f"rank-{c}": "1" for c in ids}  # every item in the same place
    if kind in ("single", "multiple") or (kind == "code_output" and ids):
        return {"answer": ["no-such-choice"]}
    if kind in ("true_false", "numeric"):
        return {"answer": "maybe"}
    return {"answer": "x" * 100_000}  # free text, past the length limit


def right(item) -> dict:
    key, kind = item.snapshot["key"]["answer"], item.snapshot["type"]
    if kind == "ordering":
        return {f"rank-{c}": str(i) for i, c in enumerate(key, start=1)}
    if kind == "true_false":
        return {"answer": "true" if key else "false"}
    if kind == "numeric":
        return {"answer": f"{key:g}"}
    return {"answer": key}


def test_the_screen_is_planned_in_sections_with_the_coding_task_last(candidate_client, synced):
    attempt = start(candidate_client)
    items = list(attempt.items.all())
    assert [i.section for i in items] == [0, 0, 0, 0, 1, 1, 1, 2]
    assert items[-1].kind == "coding" and items[-1].exercise.slug == "static-graph-executor"
    assert all(i.snapshot["code"] and i.snapshot["pitfall"] for i in items[4:7])
    assert attempt.deadline - attempt.started_at == timedelta(seconds=1800)
    assert attempt.section_deadline - attempt.started_at == timedelta(seconds=420)
    page = candidate_client.get(reverse("interviews:attempt", args=[attempt.pk])).content.decode()
    assert 'id="section-clock"' in page and 'id="interview-clock"' in page
    assert "Section 1 of 3: Concepts · item 1 of 4" in page
    assert items[0].snapshot["explanation"]["en"][:40].replace("'", "&#x27;") not in page


def test_one_question_at_a_time_and_no_going_back(candidate_client, synced):
    attempt = start(candidate_client)
    first = attempt.items.get(position=1)
    assert answer(candidate_client, attempt, 1, right(first)).status_code == 302
    attempt.refresh_from_db()
    assert attempt.current == 2
    again = answer(candidate_client, attempt, 1, {"answer": "changed-my-mind"})
    assert again.status_code == 409 and "no longer open" in again.content.decode()
    ahead = answer(candidate_client, attempt, 5, {"answer": "a"})
    assert ahead.status_code == 409
    first.refresh_from_db()
    assert first.correct is True
    assert candidate_client.post(reverse("interviews:back", args=[attempt.pk])).status_code == 302
    attempt.refresh_from_db()
    assert attempt.current == 2  # this template does not allow going back


def test_going_back_only_inside_a_section_that_allows_it(candidate_client, synced):
    attempt = start(candidate_client, DEEP_DIVE)
    answer(candidate_client, attempt, 1)
    candidate_client.post(reverse("interviews:back", args=[attempt.pk]))
    attempt.refresh_from_db()
    assert attempt.current == 1
    for position in range(1, 6):
        answer(candidate_client, attempt, position)
    attempt.refresh_from_db()
    assert attempt.section == 1 and attempt.current == 6
    candidate_client.post(reverse("interviews:back", args=[attempt.pk]))
    attempt.refresh_from_db()
    assert attempt.current == 6


def test_when_a_section_runs_out_the_interview_moves_on(candidate_client, synced):
    attempt = start(candidate_client)
    InterviewAttempt.objects.filter(pk=attempt.pk).update(section_deadline=timezone.now() - timedelta(seconds=1))
    page = candidate_client.get(reverse("interviews:attempt", args=[attempt.pk])).content.decode()
    assert "Section 2 of 3: Spot the pitfall" in page
    attempt.refresh_from_db()
    assert attempt.current == 5 and attempt.section_deadline > timezone.now() + timedelta(seconds=470)
    late = answer(candidate_client, attempt, 2, {"answer": "a"})
    assert late.status_code == 409
    assert attempt.items.get(position=2).response is None


def test_an_answer_after_the_deadline_is_refused_and_the_interview_closed(candidate_client, synced):
    attempt = start(candidate_client)
    answer(candidate_client, attempt, 1, right(attempt.items.get(position=1)))
    InterviewAttempt.objects.filter(pk=attempt.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    late = answer(candidate_client, attempt, 2, right(attempt.items.get(position=2)))
    assert late.status_code == 409
    body = late.content.decode()
    assert "Time is up" in body and 'id="scorecard"' in body
    attempt.refresh_from_db()
    assert attempt.status == "expired"
    assert attempt.items.get(position=2).response is None


def test_the_coding_step_goes_through_the_submission_pipeline(candidate_client, candidate, synced,
                                                              django_capture_on_commit_callbacks):
    attempt = start(candidate_client)
    for position in range(1, 8):
        answer(candidate_client, attempt, position)  # blank: skipped
    page = candidate_client.get(reverse("interviews:attempt", args=[attempt.pk])).content.decode()
    assert "Section 3 of 3" in page and 'name="code"' in page
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = candidate_client.post(reverse("interviews:code", args=[attempt.pk]),
                                         {"position": 8, "code": "class StaticGraph: pass\n"})
    assert response.status_code == 302 and len(callbacks) == 1  # grading queued after commit
    submission = Submission.objects.get()
    assert submission.user == candidate and submission.exercise_version.exercise.slug == "static-graph-executor"
    attempt.refresh_from_db()
    assert attempt.status == "finished" and attempt.items.get(position=8).submission == submission
    card = candidate_client.get(reverse("interviews:attempt", args=[attempt.pk])).content.decode()
    assert 'id="submission-status"' in card and "still being graded" in card
    Submission.objects.filter(pk=submission.pk).update(status="graded", verdict="PARTIAL", score=0.5)
    card = candidate_client.get(reverse("interviews:attempt", args=[attempt.pk])).content.decode()
    assert 'id="total">2.5<' in card  # half of the coding task's 5 points, no question right


@pytest.mark.parametrize(
    ("code", "message"), [("  \n", "Your submission is empty"), ("x = 1\n" * 20_000, "the limit is")],
    ids=["blank", "too-large"])
def test_bad_code_in_the_coding_step_gets_the_exercise_pages_message_and_stays_on_screen(
        candidate_client, synced, code, message):
    attempt = start(candidate_client)
    for position in range(1, 8):
        answer(candidate_client, attempt, position)
    response = candidate_client.post(reverse("interviews:code", args=[attempt.pk]), {"position": 8, "code": code},
                                     follow=True)
    assert message in response.content.decode()
    attempt.refresh_from_db()
    assert (attempt.status, attempt.current) == ("open", 8) and not Submission.objects.exists()


def test_the_scorecard_compares_with_the_previous_attempt_and_points_to_study(candidate_client, candidate, synced):
    template = InterviewTemplate.objects.get(uid=DEEP_DIVE)
    first = interview_start(user=candidate, template=template)
    candidate_client.post(reverse("interviews:finish", args=[first.pk]))  # nothing answered: 0%
    second = interview_start(user=candidate, template=template)
    for item in second.items.all():
        answer(candidate_client, second, item.position, right(item))
    second.refresh_from_db()
    assert second.status == "finished"
    card = candidate_client.get(reverse("interviews:attempt", args=[second.pk])).content.decode()
    assert '<tr data-topic="autograd">' in card
    assert "+100" in card and ">0%</td>" in card  # last time 0%, change +100
    first_card = candidate_client.get(reverse("interviews:attempt", args=[first.pk])).content.decode()
    assert "Practise this topic" in first_card and "In-place ops on saved tensors" in first_card
    history = candidate_client.get(reverse("interviews:home")).content.decode()
    assert history.count('href="/interviews/attempts/') == 2 and "100%" in history


def test_someone_elses_interview_is_out_of_reach(client, candidate, make_user, synced):
    attempt = interview_start(user=candidate, template=InterviewTemplate.objects.get(uid=SCREEN))
    client.force_login(make_user("mallory"))
    assert client.get(reverse("interviews:attempt", args=[attempt.pk])).status_code == 404
    assert answer(client, attempt, 1, {"answer": "a"}).status_code == 404
    assert client.post(reverse("interviews:finish", args=[attempt.pk])).status_code == 404
    assert client.post(reverse("interviews:code", args=[attempt.pk]), {"position": 8, "code": "x"}).status_code == 404
    attempt.refresh_from_db()
    assert attempt.status == "open" and attempt.current == 1


def test_a_tampered_answer_is_refused(candidate_client, synced):
    attempt = start(candidate_client)
    # The first question is drawn per attempt, so the tampering must fit whichever it is.
    response = answer(candidate_client, attempt, 1, unfit(attempt.items.get(position=1)))
    assert response.status_code == 302
    attempt.refresh_from_db()
    assert attempt.current == 1 and attempt.items.get(position=1).response is None
    assert candidate_client.post(reverse("interviews:answer", args=[attempt.pk]), {"position": "x"}).status_code == 404


def test_open_items_are_written_then_scored_by_the_candidate_against_the_rubric(candidate_client, synced):
    attempt = start(candidate_client, DESIGN)
    items = list(attempt.items.order_by("position"))
    open_items = [i for i in items if i.kind == "open"]
    assert [i.snapshot["ref"] for i in open_items] == [
        "compiled-slower-than-eager", "compiled-slower-than-eager/module-int-recompiles",
        "compiled-slower-than-eager/prove-the-fix", "serve-without-python",
        "serve-without-python/export-fails-on-branch"]
    for item in items:
        if item.kind == "question":
            answer(candidate_client, attempt, item.position)  # skipped
    page = candidate_client.get(reverse("interviews:attempt", args=[attempt.pk])).content.decode()
    assert "A colleague wrapped the model in torch.compile" in page and 'name="answer"' in page
    assert "Model answer" not in page and "warm-up" not in page  # nothing of the rubric before answering
    assert "Scored sample answers" not in page and "torch.compile is still experimental" not in page
    first, follow_up = open_items[0], open_items[1]
    candidate_client.post(reverse("interviews:open", args=[attempt.pk]),
                          {"position": first.position, "answer": "Warm up, then TORCH_LOGS=recompiles."})
    page = candidate_client.get(reverse("interviews:attempt", args=[attempt.pk])).content.decode()
    assert "Follow-up" in page and "self.step == 41" in page  # its follow-up comes next, in the flow
    early = candidate_client.post(reverse("interviews:self_score", args=[attempt.pk]),
                                  {"position": first.position, "rubric": ["measurement"]})
    assert early.status_code == 302
    first.refresh_from_db()
    assert first.response == {"text": "Warm up, then TORCH_LOGS=recompiles.", "rubric": []}  # not while open
    candidate_client.post(reverse("interviews:finish", args=[attempt.pk]))

    scorecard = candidate_client.get(reverse("interviews:attempt", args=[attempt.pk])).content.decode()
    review = scorecard.split(f'id="open-{first.position}"')[1].split("</article>")[0]
    assert "Warm up, then TORCH_LOGS=recompiles." in review and "Model answer" in review
    assert "Separates compile time from steady state" in review
    # Three scored sample answers, each with the rubric lines it meets (8, 3 and 0 of 9 points).
    samples = review.split('class="samples"')[1]
    assert "Scored sample answers" in samples and samples.count('class="sample"') == 3
    assert "8 of 9 points" in samples and "3 of 9 points" in samples and "0 of 9 points" in samples
    assert "torch.compile is still experimental" in samples and "Meets no line of the rubric." in samples
    candidate_client.cookies["django_language"] = "zh-hans"
    chinese = candidate_client.get(reverse("interviews:attempt", args=[attempt.pk])).content.decode()
    chinese = chinese.split(f'id="open-{first.position}"')[1].split("</article>")[0]
    assert "带评分的示例答案" in chinese and "torch.compile 还不成熟" in chinese
    assert "没有满足评分标准中的任何一条。" in chinese and "9 分中得 8 分" in chinese
    candidate_client.cookies["django_language"] = "en"
    candidate_client.post(reverse("interviews:self_score", args=[attempt.pk]),
                          {"position": first.position, "rubric": ["measurement", "recompiles", "not-a-line"]})
    first.refresh_from_db()
    assert first.response["rubric"] == ["measurement", "recompiles"]
    scorecard = candidate_client.get(reverse("interviews:attempt", args=[attempt.pk])).content.decode()
    assert '<span id="total">4</span> / 27' in scorecard  # 2 + 2; four questions and 9 + 2 + 2 + 8 + 2 open
    skipped = candidate_client.post(reverse("interviews:self_score", args=[attempt.pk]),
                                    {"position": follow_up.position, "rubric": ["specialised"]}, follow=True)
    assert "this question was skipped" in skipped.content.decode()

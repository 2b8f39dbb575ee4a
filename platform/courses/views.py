from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.http import AuthenticatedHttpRequest
from accounts.models import User
from courses import services
from courses.analytics import exercise_stats, quiz_stats
from courses.exports import csv_response, gradebook_rows
from courses.forms import (
    AssignmentForm,
    AssistantForm,
    CourseForm,
    CoursePseudonymForm,
    InvitationSignUpForm,
    ItemForm,
    JoinForm,
    OverrideForm,
    RosterForm,
)
from courses.models import AssignmentItem, ItemScore, RegradeJob, ScoreOverride
from courses.selectors import (
    assignments_of,
    course_for,
    gradebook,
    invitation_open,
    invitations_of,
    memberships_of,
    regrade_progress,
    staff_of,
    student_record,
    students_of,
)
from grading.models import Submission
from grading.services import SubmissionRefused, submission_create
from workbench.forms import SubmissionForm


def _errors(error: ValidationError) -> str:
    return " ".join(error.messages)


@login_required
def course_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(
        request,
        "courses/list.html",
        {"memberships": memberships_of(request.user), "join": JoinForm()},
    )


@login_required
def course_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    if not request.user.is_instructor:
        raise Http404
    form = CourseForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        course = services.course_create(by=request.user, **form.cleaned_data)
        return redirect("courses:detail", course.pk)
    return render(
        request, "courses/form.html", {"form": form, "heading": _("New course")}, status=400 if form.errors else 200
    )


@login_required
def course_join(request: AuthenticatedHttpRequest, code: str = "") -> HttpResponse:
    form = JoinForm(request.POST or None, initial={"code": code})
    if request.method == "POST" and form.is_valid():
        try:
            course = services.course_join(user=request.user, code=form.cleaned_data["code"])
        except ValidationError as error:
            form.add_error("code", _errors(error))
        else:
            messages.success(request, _("You joined %(course)s.") % {"course": course.title})
            return redirect("courses:detail", course.pk)
    return render(request, "courses/join.html", {"form": form}, status=400 if form.errors else 200)


@login_required
def course_detail(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk)
    pseudonym_form = CoursePseudonymForm(request.POST or None, initial={"pseudonym": membership.pseudonym})
    status = 200
    if request.method == "POST" and membership.role == membership.Role.STUDENT:
        status = 400
        if pseudonym_form.is_valid():
            try:
                services.membership_pseudonym_set(membership=membership, name=pseudonym_form.cleaned_data["pseudonym"])
            except ValidationError as error:
                pseudonym_form.add_error("pseudonym", _errors(error))
            else:
                messages.success(request, _("Saved."))
                return redirect("courses:detail", course.pk)
    assignments = list(assignments_of(course))
    mine = {s.item_id: s for s in ItemScore.objects.filter(item__assignment__course=course, user=request.user)}
    return render(
        request,
        "courses/detail.html",
        {
            "course": course,
            "membership": membership,
            "assignments": assignments,
            "mine": mine,
            "now": timezone.now(),
            "join_link": request.build_absolute_uri(reverse("courses:join_code", args=[course.join_code])),
            "pseudonym_form": pseudonym_form,
        },
        status=status,
    )


@login_required
def course_edit(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, instructor=True)
    form = CourseForm(request.POST or None, instance=course)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect("courses:detail", course.pk)
    return render(
        request,
        "courses/form.html",
        {"form": form, "course": course, "heading": _("Edit course")},
        status=400 if form.errors else 200,
    )


def _base_url(request: HttpRequest) -> str:
    return request.build_absolute_uri("/").rstrip("/")


@login_required
def roster(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, staff=True)
    roster_form, assistant_form = RosterForm(), AssistantForm()
    status = 200
    if request.method == "POST":
        if membership.role != membership.Role.INSTRUCTOR:
            raise Http404
        try:
            if "roster" in request.FILES:
                roster_form = RosterForm(request.POST, request.FILES)
                if roster_form.is_valid():
                    result = services.roster_import(
                        course=course, data=roster_form.cleaned_data["roster"].read(), base_url=_base_url(request)
                    )
                    messages.success(
                        request,
                        _("%(n)s new invitations sent by email; %(m)s of the rows were invited before.")
                        % {"n": len(result.invited), "m": len(result.already)},
                    )
                    return redirect("courses:roster", course.pk)
            elif request.POST.get("resend", "").isdigit():
                invitation = services.invitation_resend(
                    course=course, invitation_id=int(request.POST["resend"]), base_url=_base_url(request)
                )
                messages.success(
                    request, _("The invitation was sent again to %(email)s.") % {"email": invitation.email}
                )
                return redirect("courses:roster", course.pk)
            else:
                assistant_form = AssistantForm(request.POST)
                if assistant_form.is_valid():
                    invited = services.assistant_add(
                        course=course, who=assistant_form.cleaned_data["who"], base_url=_base_url(request)
                    )
                    messages.success(request, _("%(email)s is invited as an assistant.") % {"email": invited.email})
                    return redirect("courses:roster", course.pk)
        except ValidationError as error:
            messages.error(request, _errors(error))
        status = 400
    return render(
        request,
        "courses/roster.html",
        {
            "course": course,
            "membership": membership,
            "students": students_of(course),
            "staff": staff_of(course),
            "invitations": invitations_of(course),
            "roster_form": roster_form,
            "assistant_form": assistant_form,
        },
        status=status,
    )


def invitation(request: HttpRequest, pk: int, token: str) -> HttpResponse:
    """Where an emailed invitation leads: accept it logged in, or make an account for it."""
    opened = invitation_open(pk, token)
    if opened is None:
        return render(request, "courses/invitation.html", {"invalid": True}, status=400)
    signup = InvitationSignUpForm(
        request.POST if request.method == "POST" and not request.user.is_authenticated else None,
        initial={"username": opened.username},
    )
    status = 200
    if request.method == "POST":
        status = 400
        try:
            if request.user.is_authenticated:
                services.invitation_claim(invitation=opened, user=request.user)
                return redirect("courses:detail", opened.course_id)
            if signup.is_valid():
                user = services.invitation_claim_with_new_account(
                    invitation=opened,
                    username=signup.cleaned_data["username"],
                    password=signup.cleaned_data["password1"],
                )
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
                return redirect("courses:detail", opened.course_id)
        except ValidationError as error:
            signup.add_error(None, _errors(error))
    return render(
        request,
        "courses/invitation.html",
        {
            "invitation": opened,
            "course": opened.course,
            "signup": signup,
            "has_account": User.objects.filter(email__iexact=opened.email).exists(),
        },
        status=status,
    )


@login_required
def assignment_create(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, instructor=True)
    form = AssignmentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        assignment = services.assignment_create(course=course, **form.cleaned_data)
        return redirect("courses:assignment", course.pk, assignment.pk)
    return render(
        request,
        "courses/assignment_form.html",
        {"form": form, "course": course, "heading": _("New assignment")},
        status=400 if form.errors else 200,
    )


@login_required
def assignment_detail(request: AuthenticatedHttpRequest, pk: int, assignment_pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk)
    assignment = get_object_or_404(assignments_of(course), pk=assignment_pk)
    form = ItemForm(request.POST or None)
    if request.method == "POST":
        if membership.role != membership.Role.INSTRUCTOR:
            raise Http404
        if form.is_valid():
            services.item_add(
                assignment=assignment,
                kind=form.cleaned_data["kind"],
                target=form.cleaned_data["target"],
                points=form.cleaned_data["points"],
            )
            return redirect("courses:assignment", course.pk, assignment.pk)
    mine = {s.item_id: s for s in ItemScore.objects.filter(item__assignment=assignment, user=request.user)}
    return render(
        request,
        "courses/assignment.html",
        {
            "course": course,
            "membership": membership,
            "assignment": assignment,
            "form": form,
            "mine": mine,
            "now": timezone.now(),
        },
        status=400 if form.errors else 200,
    )


@login_required
def item_work(request: AuthenticatedHttpRequest, pk: int, item_pk: int) -> HttpResponse:
    """An assignment's exercise at the version the assignment pins: its statement, and a code
    form whose submissions are graded against that version (not the exercise's latest)."""
    course, membership = course_for(request.user, pk)
    item = get_object_or_404(
        AssignmentItem.objects.select_related("exercise_version__exercise", "assignment"),
        pk=item_pk,
        assignment__course=course,
        kind=AssignmentItem.Kind.EXERCISE,
    )
    version = item.exercise_version
    assert version is not None, "an exercise item pins a version"
    exercise = version.exercise
    form = SubmissionForm(request.POST or None, initial={"code": version.starter})
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                submission = submission_create(
                    user=request.user,
                    exercise=exercise,
                    version=version,
                    code=form.cleaned_data["code"] or "",
                    idempotency_key=form.cleaned_data["idempotency_key"],
                )
            except SubmissionRefused as refused:
                form.add_error(None, refused)
                status = 429
            except ValidationError as error:
                form.add_error("code", error)
            else:
                # The verdict's back link returns here, inside the course, not to the open exercise.
                back = reverse("courses:item_work", args=[course.pk, item.pk])
                return redirect(f"{reverse('submissions:detail', args=[submission.pk])}?{urlencode({'back': back})}")
    return render(
        request,
        "courses/item_work.html",
        {
            "course": course,
            "membership": membership,
            "item": item,
            "assignment": item.assignment,
            "version": version,
            "exercise": exercise,
            "newer": exercise.current_version_id != version.id,
            "form": form,
            "submissions": Submission.objects.filter(user=request.user, exercise_version=version)[:10],
            "score": ItemScore.objects.filter(item=item, user=request.user).first(),
            "now": timezone.now(),
        },
        status=status,
    )


@login_required
@require_POST
def item_move_version(request: AuthenticatedHttpRequest, pk: int, item_pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, instructor=True)
    item = get_object_or_404(
        AssignmentItem.objects.select_related("exercise_version", "assignment__course"),
        pk=item_pk,
        assignment__course=course,
        kind=AssignmentItem.Kind.EXERCISE,
    )
    try:
        job = services.item_move_to_current_version(item=item, by=request.user)
    except ValidationError as error:
        messages.error(request, _errors(error))
        return redirect("courses:assignment", course.pk, item.assignment_id)
    return redirect("courses:job", course.pk, job.pk)


@login_required
def gradebook_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, staff=True)
    return render(
        request,
        "courses/gradebook.html",
        {"course": course, "membership": membership, "book": gradebook(course), "jobs": course.regrade_jobs.all()[:5]},
    )


@login_required
def gradebook_csv(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, staff=True)
    return csv_response(f"gradebook-{course.pk}.csv", gradebook_rows(course))


@login_required
def student_detail(request: AuthenticatedHttpRequest, pk: int, user_pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, staff=True)
    student = get_object_or_404(students_of(course), pk=user_pk)
    assignments = list(assignments_of(course))
    items = [item for a in assignments for item in a.items.all()]
    return render(
        request,
        "courses/student.html",
        {
            "course": course,
            "membership": membership,
            "student": student,
            # The course's own name for them: staff (assistants included) never learn the site-wide one.
            "board_name": course.memberships.get(user=student).pseudonym,
            "assignments": assignments,
            "record": student_record(course, student, items),
            "override_form": OverrideForm(),
            "overrides": ScoreOverride.objects.filter(item__assignment__course=course, user=student).select_related(
                "by", "item"
            ),
        },
    )


@login_required
@require_POST
def score_override_view(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, staff=True)
    form = OverrideForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("The override was not saved: give a score and a reason."))
        student = get_object_or_404(
            students_of(course), pk=form.data.get("student") if form.data.get("student", "").isdigit() else 0
        )
        return redirect("courses:student", course.pk, student.pk)
    item = get_object_or_404(AssignmentItem, pk=form.cleaned_data["item"], assignment__course=course)
    student = get_object_or_404(students_of(course), pk=form.cleaned_data["student"])
    try:
        services.score_override(
            item=item,
            user=student,
            points=form.cleaned_data["points"],
            reason=form.cleaned_data["reason"],
            by=request.user,
        )
    except ValidationError as error:
        messages.error(request, _errors(error))
    return redirect("courses:student", course.pk, student.pk)


@login_required
@require_POST
def regrade(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Regrade one submission, every submission to an exercise item, or a whole assignment."""
    course, membership = course_for(request.user, pk, staff=True)
    students = students_of(course).values("id")
    submissions = Submission.objects.filter(user__in=students)
    if request.POST.get("submission"):
        submission = get_object_or_404(
            submissions,
            pk=request.POST["submission"],
            exercise_version__in=AssignmentItem.objects.filter(assignment__course=course).values("exercise_version"),
        )
        ids, scope = [submission.pk], _("submission #%(n)s") % {"n": submission.pk}
    elif request.POST.get("item"):
        item = get_object_or_404(
            AssignmentItem, pk=request.POST["item"], assignment__course=course, kind=AssignmentItem.Kind.EXERCISE
        )
        ids = list(submissions.filter(exercise_version=item.exercise_version_id).values_list("id", flat=True))
        scope = _("every submission to %(title)s") % {"title": str(item.exercise_version)}
    elif request.POST.get("assignment"):
        assignment = get_object_or_404(course.assignments, pk=request.POST["assignment"])
        versions = assignment.items.filter(kind=AssignmentItem.Kind.EXERCISE).values("exercise_version")
        ids = list(submissions.filter(exercise_version__in=versions).values_list("id", flat=True))
        scope = _("assignment %(title)s") % {"title": assignment.title_en}
    else:
        raise Http404
    job = services.regrade_start(course=course, by=request.user, scope=scope, submission_ids=ids)
    return redirect("courses:job", course.pk, job.pk)


@login_required
def job_detail(request: AuthenticatedHttpRequest, pk: int, job_pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, staff=True)
    job = get_object_or_404(RegradeJob, pk=job_pk, course=course)
    template = "courses/_job_progress.html" if request.headers.get("HX-Request") else "courses/job.html"
    return render(request, template, {"course": course, "membership": membership, "progress": regrade_progress(job)})


@login_required
def analytics(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    course, membership = course_for(request.user, pk, staff=True)
    items = [item for a in assignments_of(course) for item in a.items.all()]
    exercises = [exercise_stats(course, item) for item in items if item.kind == AssignmentItem.Kind.EXERCISE]
    quizzes = [(item, quiz_stats(course, item)) for item in items if item.kind == AssignmentItem.Kind.QUIZ]
    return render(
        request,
        "courses/analytics.html",
        {
            "course": course,
            "membership": membership,
            "exercises": exercises,
            "quizzes": quizzes,
            "charts": [
                {"id": f"ex-{s.item.pk}", "verdicts": s.verdicts, "minutes": s.minutes_to_accept, "ratios": s.ratios}
                for s in exercises
            ],
        },
    )

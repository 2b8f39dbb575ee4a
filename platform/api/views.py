"""The REST API: the same reads and writes as the pages, through the same selectors and
services, with the same permissions (a user sees their own submissions only)."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views import defaults
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import ValidationError as ApiValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from api.serializers import (
    BoardQuerySerializer,
    BoardSerializer,
    ExerciseDetailSerializer,
    ExerciseQuerySerializer,
    ExerciseSerializer,
    QuizBankSerializer,
    SubmissionQuerySerializer,
    SubmissionSerializer,
    SubmitSerializer,
)
from catalog.selectors import exercises_published
from grading.models import Submission
from grading.services import submission_create
from leaderboards.selectors import exercise_board
from quizzes.selectors import banks_published
from workbench.selectors import exercise_entries


class ProblemSerializer(serializers.Serializer):
    detail = serializers.CharField()


NOT_LOGGED_IN = {
    401: OpenApiResponse(ProblemSerializer, description="No token, or a wrong one"),
    403: OpenApiResponse(ProblemSerializer, description="Not allowed"),
}
NOT_FOUND = {404: OpenApiResponse(ProblemSerializer, description="No such thing, or not yours"), **NOT_LOGGED_IN}
REFUSED = {400: OpenApiResponse(description="The code was refused: each field names its problems")}


SLUG = OpenApiParameter("slug", str, OpenApiParameter.PATH, pattern=r"^[-a-zA-Z0-9_]+$")


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The site's 404 page, or for an API address (even one no route matches) a JSON answer."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


class ExerciseListView(GenericAPIView):
    serializer_class = ExerciseSerializer

    @extend_schema(
        operation_id="exercises_list",
        summary="Published exercises, easiest first, each marked for you",
        parameters=[ExerciseQuerySerializer],
        responses={200: ExerciseSerializer(many=True), 400: OpenApiResponse(description="A filter out of range"),
                   **NOT_LOGGED_IN},
    )
    def get(self, request: Request) -> Response:
        # A dict, not the QueryDict: "?difficulty=" is then a value to refuse, not an absence.
        query = ExerciseQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        entries = exercise_entries(
            request.user, difficulty=query.validated_data.get("difficulty", ""), tag=query.validated_data.get("tag", "")
        )
        return Response(ExerciseSerializer(entries, many=True).data)


class ExerciseDetailView(GenericAPIView):
    serializer_class = ExerciseDetailSerializer

    @extend_schema(
        operation_id="exercises_retrieve",
        summary="One exercise: statement and starter code",
        parameters=[SLUG],
        responses={200: ExerciseDetailSerializer, **NOT_FOUND},
    )
    def get(self, request: Request, slug: str) -> Response:
        entry = next((e for e in exercise_entries(request.user) if e.exercise.slug == slug), None)
        if entry is None:
            raise Http404
        return Response(ExerciseDetailSerializer(entry).data)


class SubmitView(GenericAPIView):
    serializer_class = SubmitSerializer

    @extend_schema(
        operation_id="exercises_submit",
        summary="Submit code for grading",
        request=SubmitSerializer,
        parameters=[SLUG],
        responses={201: SubmissionSerializer, **REFUSED, **NOT_FOUND},
    )
    def post(self, request: Request, slug: str) -> Response:
        exercise = get_object_or_404(exercises_published(), slug=slug)
        body = SubmitSerializer(data=request.data)
        body.is_valid(raise_exception=True)  # the pages' own checks, which the schema states
        try:
            submission = submission_create(user=request.user, exercise=exercise, code=body.validated_data["code"])
        except ValidationError as error:
            raise ApiValidationError({"code": error.messages}) from None
        data = SubmissionSerializer(submission, context={"request": request}).data
        return Response(data, status=status.HTTP_201_CREATED)


class SubmissionListView(GenericAPIView):
    serializer_class = SubmissionSerializer

    @extend_schema(
        operation_id="submissions_list",
        summary="Your submissions, newest first",
        parameters=[SubmissionQuerySerializer],
        responses={200: SubmissionSerializer(many=True), 400: OpenApiResponse(description="A filter out of range"),
                   **NOT_LOGGED_IN},
    )
    def get(self, request: Request) -> Response:
        query = SubmissionQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        mine = Submission.objects.filter(user=request.user).select_related("exercise_version__exercise")
        if "exercise" in query.validated_data:
            mine = mine.filter(exercise_version__exercise__slug=query.validated_data["exercise"])
        newest = mine.order_by("-created_at", "-id")[: query.validated_data["limit"]]
        return Response(SubmissionSerializer(newest, many=True, context={"request": request}).data)


class SubmissionDetailView(GenericAPIView):
    serializer_class = SubmissionSerializer

    @extend_schema(
        operation_id="submissions_retrieve",
        summary="A submission's status and, once graded, its verdict",
        responses={200: SubmissionSerializer, **NOT_FOUND},
    )
    def get(self, request: Request, pk: int) -> Response:
        submission = get_object_or_404(
            Submission.objects.select_related("exercise_version__exercise"), pk=pk, user=request.user
        )
        return Response(SubmissionSerializer(submission, context={"request": request}).data)


class LeaderboardView(GenericAPIView):
    serializer_class = BoardSerializer

    @extend_schema(
        operation_id="exercises_leaderboard",
        summary="The exercise's site-wide leaderboard, one page, and your row",
        parameters=[SLUG, BoardQuerySerializer],
        responses={200: BoardSerializer, 400: OpenApiResponse(description="A page out of range"), **NOT_FOUND},
    )
    def get(self, request: Request, slug: str) -> Response:
        exercise = get_object_or_404(exercises_published(), slug=slug)
        query = BoardQuerySerializer(data=request.query_params.dict())  # "?page=" too is a value, not absence
        query.is_valid(raise_exception=True)
        board = exercise_board(exercise, viewer=request.user, page=query.validated_data["page"])
        return Response(BoardSerializer(board).data)


class QuizBankListView(GenericAPIView):
    serializer_class = QuizBankSerializer

    @extend_schema(
        operation_id="quizzes_list",
        summary="The quiz banks you can take",
        responses={200: QuizBankSerializer(many=True), **NOT_LOGGED_IN},
    )
    def get(self, request: Request) -> Response:
        return Response(QuizBankSerializer(banks_published(), many=True).data)


@login_required
def token_page(request: HttpRequest) -> HttpResponse:
    """Where a user makes (or replaces, or revokes) the personal token the API and CLI use."""
    if request.method == "POST":
        Token.objects.filter(user=request.user).delete()
        if request.POST.get("action") == "create":
            Token.objects.create(user=request.user)
        return redirect("api:token")
    token = Token.objects.filter(user=request.user).first()
    return render(request, "api/token.html", {"token": token})

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from api import views

app_name = "api"
urlpatterns = [
    path("v1/exercises/", views.ExerciseListView.as_view(), name="exercise_list"),
    path("v1/exercises/<slug:slug>/", views.ExerciseDetailView.as_view(), name="exercise_detail"),
    path("v1/exercises/<slug:slug>/submissions/", views.SubmitView.as_view(), name="submit"),
    path("v1/exercises/<slug:slug>/leaderboard/", views.LeaderboardView.as_view(), name="leaderboard"),
    path("v1/submissions/", views.SubmissionListView.as_view(), name="submission_list"),
    path("v1/submissions/<int:pk>/", views.SubmissionDetailView.as_view(), name="submission_detail"),
    path("v1/quizzes/", views.QuizBankListView.as_view(), name="quiz_list"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("token/", views.token_page, name="token"),
]

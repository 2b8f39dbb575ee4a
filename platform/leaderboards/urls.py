from django.urls import path

from leaderboards import views

app_name = "leaderboards"
urlpatterns = [
    path("", views.index, name="index"),
    path("exercises/<slug:slug>/you/", views.your_rank, name="your_rank"),
    path("exercises/<slug:slug>/", views.exercise_view, name="exercise"),
    path("exercises/<slug:slug>/regrade-stale/", views.regrade_stale, name="regrade_stale"),
    path("exercises/<slug:slug>/course/<int:pk>/", views.exercise_course_view, name="exercise_course"),
    path("courses/<int:pk>/", views.course_view, name="course"),
]

from django.urls import path

from submissions import views

app_name = "submissions"
urlpatterns = [
    path("", views.exercise_list, name="exercise_list"),
    path("exercises/<slug:slug>/", views.exercise_detail, name="exercise_detail"),
    path("submissions/new/<slug:slug>/", views.submission_create_view, name="create"),
    path("submissions/<int:pk>/", views.submission_detail, name="detail"),
    path("submissions/<int:pk>/status/", views.submission_status, name="status"),
]

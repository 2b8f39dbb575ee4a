from django.urls import path

from similarity import views

app_name = "similarity"
urlpatterns = [
    path("exercises/<slug:slug>/", views.exercise_view, name="exercise"),
    path("exercises/<slug:slug>/pairs/<int:a>/<int:b>/", views.exercise_pair, name="exercise_pair"),
    path("exercises/<slug:slug>/hold/", views.exercise_hold, name="exercise_hold"),
    path("courses/<int:pk>/assignments/<int:assignment_pk>/", views.assignment_view, name="assignment"),
    path(
        "courses/<int:pk>/assignments/<int:assignment_pk>/pairs/<int:a>/<int:b>/",
        views.assignment_pair,
        name="assignment_pair",
    ),
    path("courses/<int:pk>/assignments/<int:assignment_pk>/hold/", views.assignment_hold, name="assignment_hold"),
]

from django.urls import path

from catalog import views

app_name = "catalog"
urlpatterns = [
    path("", views.exercise_list, name="exercise_list"),
    path("exercises/<slug:slug>/", views.exercise_detail, name="exercise_detail"),
]

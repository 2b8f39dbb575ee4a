from django.urls import path

from catalog import views, views_authoring

app_name = "catalog"
urlpatterns = [
    path("", views.exercise_list, name="exercise_list"),
    path("exercises/<slug:slug>/", views.exercise_detail, name="exercise_detail"),
    path("authoring/", views_authoring.upload_list, name="upload_list"),
    path("authoring/<int:upload_id>/", views_authoring.upload_detail, name="upload_detail"),
    path("authoring/<int:upload_id>/preview/", views_authoring.upload_preview, name="upload_preview"),
    path("authoring/<int:upload_id>/publish/", views_authoring.upload_publish_view, name="upload_publish"),
]

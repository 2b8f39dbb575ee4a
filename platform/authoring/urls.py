from django.urls import path

from authoring import views

app_name = "authoring"
urlpatterns = [
    path("", views.upload_list, name="upload_list"),
    path("<int:upload_id>/", views.upload_detail, name="upload_detail"),
    path("<int:upload_id>/preview/", views.upload_preview, name="upload_preview"),
    path("<int:upload_id>/publish/", views.upload_publish_view, name="upload_publish"),
]

from django.urls import path

from submissions import views

app_name = "submissions"
urlpatterns = [
    path("new/<slug:slug>/", views.submission_create_view, name="create"),
    path("<int:pk>/", views.submission_detail, name="detail"),
    path("<int:pk>/status/", views.submission_status, name="status"),
]

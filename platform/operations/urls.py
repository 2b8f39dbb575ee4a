from django.urls import path

from operations import views

app_name = "operations"
urlpatterns = [
    path("healthz/", views.healthz, name="healthz"),
    path("metrics", views.metrics, name="metrics"),
    path("operations/", views.dashboard, name="dashboard"),
]

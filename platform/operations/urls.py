from django.urls import path

from operations import views

app_name = "operations"
urlpatterns = [
    path("healthz/", views.healthz, name="healthz"),
]

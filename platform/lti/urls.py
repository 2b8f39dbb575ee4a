from django.urls import path
from lti_tool.views import jwks

from lti import views

app_name = "lti"
urlpatterns = [
    path("login/", views.login, name="login"),
    path("launch/", views.launch, name="launch"),
    path("jwks/", jwks, name="jwks"),
    path("registrations/", views.registrations, name="registrations"),
    path("register/<str:token>/", views.register, name="register"),
    path("not-ready/", views.not_ready, name="not_ready"),
    path("courses/<int:pk>/", views.course, name="course"),
    path("courses/<int:pk>/pick/", views.pick, name="pick"),
    path("courses/<int:pk>/roster/", views.roster, name="roster"),
]

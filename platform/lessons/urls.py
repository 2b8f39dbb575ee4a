from django.urls import path
from django.views.i18n import JavaScriptCatalog

from lessons import views

app_name = "lessons"
urlpatterns = [
    path("", views.lesson_index, name="index"),
    path("jsi18n/", JavaScriptCatalog.as_view(packages=["lessons"]), name="jsi18n"),
    path("playground/", views.playground, name="playground"),
    path("playground/run/", views.playground_run_view, name="playground_run"),
    path("compile-flow/", views.compile_flow_view, name="compile_flow"),
    path("runs/<int:pk>/", views.run_status_view, name="run_status"),
    path("<slug:slug>/", views.lesson_detail, name="detail"),
    path("<slug:slug>/read/", views.lesson_read_view, name="read"),
    path("<slug:slug>/quiz/", views.lesson_quiz_view, name="quiz"),
]

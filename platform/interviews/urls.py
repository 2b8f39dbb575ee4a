from django.urls import path

from interviews import views

app_name = "interviews"
urlpatterns = [
    path("", views.interview_home, name="home"),
    path("<slug:uid>/start/", views.interview_start_view, name="start"),
    path("attempts/<int:pk>/", views.interview_attempt, name="attempt"),
    path("attempts/<int:pk>/answer/", views.interview_answer_view, name="answer"),
    path("attempts/<int:pk>/code/", views.interview_code_view, name="code"),
    path("attempts/<int:pk>/open/", views.interview_open_view, name="open"),
    path("attempts/<int:pk>/self-score/", views.interview_self_score_view, name="self_score"),
    path("attempts/<int:pk>/back/", views.interview_back_view, name="back"),
    path("attempts/<int:pk>/finish/", views.interview_finish_view, name="finish"),
]

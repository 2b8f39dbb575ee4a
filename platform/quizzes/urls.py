from django.urls import path

from quizzes import views

app_name = "quizzes"
urlpatterns = [
    path("", views.quiz_home, name="home"),
    path("start/", views.quiz_start_custom_view, name="start_custom"),
    path("review/", views.quiz_start_review_view, name="start_review"),
    path("banks/<slug:uid>/start/", views.quiz_start_bank_view, name="start_bank"),
    path("attempts/<int:pk>/", views.attempt_detail, name="attempt"),
    path("attempts/<int:pk>/items/<int:position>/", views.answer_save_view, name="save"),
    path("attempts/<int:pk>/finish/", views.attempt_finish_view, name="finish"),
]

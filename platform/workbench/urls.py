from django.urls import path

from workbench import views

app_name = "workbench"
urlpatterns = [
    path("drafts/<slug:slug>/", views.draft_save_view, name="draft_save"),
    path("practice/<slug:slug>/", views.practice_start_view, name="practice_start"),
    path("hints/<slug:slug>/", views.hint_reveal_view, name="hint_reveal"),
    path("practice/runs/<int:pk>/", views.practice_status_view, name="practice_status"),
]

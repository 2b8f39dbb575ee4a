from django.urls import path

from workbench import views

app_name = "workbench"
urlpatterns = [
    path("drafts/<slug:slug>/", views.draft_save_view, name="draft_save"),
    path("practice/<slug:slug>/", views.practice_start_view, name="practice_start"),
    path("hints/<slug:slug>/", views.hint_reveal_view, name="hint_reveal"),
    path("practice/runs/<int:pk>/", views.practice_status_view, name="practice_status"),
]

# The exercise pages, at the site's root: their URLs and names ("submissions:detail", ...) are
# the ones they had when an app of that name served them, so links and bookmarks keep working.
exercise_pages = ([
    path("", views.exercise_list, name="exercise_list"),
    path("exercises/<slug:slug>/", views.exercise_detail, name="exercise_detail"),
    path("submissions/new/<slug:slug>/", views.submission_create_view, name="create"),
    path("submissions/<int:pk>/", views.submission_detail, name="detail"),
    path("submissions/<int:pk>/status/", views.submission_status, name="status"),
], "submissions")

from django.urls import path

from workbench import views

app_name = "workbench"
urlpatterns = [
    path("drafts/<slug:slug>/", views.draft_save_view, name="draft_save"),
]

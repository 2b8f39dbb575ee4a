from django.urls import path

from courses import views

app_name = "courses"
urlpatterns = [
    path("", views.course_list, name="list"),
    path("new/", views.course_create, name="create"),
    path("join/", views.course_join, name="join"),
    path("join/<str:code>/", views.course_join, name="join_code"),
    path("invitations/<int:pk>/<str:token>/", views.invitation, name="invitation"),
    path("<int:pk>/", views.course_detail, name="detail"),
    path("<int:pk>/edit/", views.course_edit, name="edit"),
    path("<int:pk>/roster/", views.roster, name="roster"),
    path("<int:pk>/assignments/new/", views.assignment_create, name="assignment_create"),
    path("<int:pk>/assignments/<int:assignment_pk>/", views.assignment_detail, name="assignment"),
    path("<int:pk>/items/<int:item_pk>/", views.item_work, name="item_work"),
    path("<int:pk>/items/<int:item_pk>/move-version/", views.item_move_version, name="item_move_version"),
    path("<int:pk>/gradebook/", views.gradebook_view, name="gradebook"),
    path("<int:pk>/gradebook.csv", views.gradebook_csv, name="gradebook_csv"),
    path("<int:pk>/students/<int:user_pk>/", views.student_detail, name="student"),
    path("<int:pk>/override/", views.score_override_view, name="override"),
    path("<int:pk>/regrade/", views.regrade, name="regrade"),
    path("<int:pk>/jobs/<int:job_pk>/", views.job_detail, name="job"),
    path("<int:pk>/analytics/", views.analytics, name="analytics"),
]

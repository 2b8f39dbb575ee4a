from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from operations.login import ThrottledLoginView, ThrottledPasswordChangeView
from progress.views import account
from workbench import urls as workbench_urls

urlpatterns = [
    # The admin's own login form has no brake: staff log in through the site's braked one.
    path("admin/login/", RedirectView.as_view(pattern_name="login", query_string=True)),
    # Nor its own password change (unbraked, and it would keep the account's API tokens): the site's.
    path("admin/password_change/", RedirectView.as_view(pattern_name="accounts:password_change")),
    path("admin/", admin.site.urls),
    path("login/", ThrottledLoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    # The change form asks for the current password: braked like the login (before accounts.urls, same name).
    path("accounts/password/", ThrottledPasswordChangeView.as_view()),
    # The account page adds the student's record, which accounts cannot read (before accounts.urls, same name).
    path("accounts/profile/", account),
    path("accounts/", include("accounts.urls")),
    path("courses/", include("courses.urls")),
    path("boards/", include("leaderboards.urls")),
    path("similarity/", include("similarity.urls")),
    path("quizzes/", include("quizzes.urls")),
    path("interviews/", include("interviews.urls")),
    path("workbench/", include("workbench.urls")),
    path("api/", include("api.urls")),
    path("lessons/", include("lessons.urls")),
    path("glossary/", include("glossary.urls")),
    path("authoring/", include("authoring.urls")),
    path("lti/", include("lti.urls")),
    path("", include("operations.urls")),
    path("", include(workbench_urls.exercise_pages)),
]

handler404 = "api.views.page_not_found"

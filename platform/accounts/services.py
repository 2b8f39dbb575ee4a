from django.contrib.auth.models import Group, Permission
from django.core.mail import send_mail
from django.db.models import Q, QuerySet
from django.utils import translation
from django.utils.translation import gettext as _
from rest_framework.authtoken.models import Token

from accounts.models import User
from grader.contract import LANGUAGES

DEMO_ACCOUNTS = (
    # (username, password, role)
    ("instructor", "graphdojo-instructor", User.Role.INSTRUCTOR),
    ("student", "graphdojo-student", User.Role.STUDENT),
)
# What an instructor manages in the admin: content, named model by model. Never students' work
# (submissions, quiz and interview attempts, review states): the admin would show every
# student's on the site, and an instructor sees their own class's on the course pages (red team:
# an instructor read any stranger's code and could rewrite any quiz score). A model added to one
# of these apps gets no admin rights until it is named here.
INSTRUCTOR_MODELS = (
    ("catalog", "exercise"),
    ("catalog", "exerciseversion"),
    ("catalog", "exerciseupload"),
    ("quizzes", "topic"),
    ("quizzes", "bank"),
    ("quizzes", "question"),
    ("interviews", "interviewtemplate"),
)
INSTRUCTORS_GROUP = "Instructors"


def instructor_permissions() -> QuerySet[Permission]:
    named = Q()
    for app_label, model in INSTRUCTOR_MODELS:
        named |= Q(content_type__app_label=app_label, content_type__model=model)
    return Permission.objects.filter(named)


def instructors_group() -> Group:
    """The group every instructor belongs to, with the admin rights the role needs."""
    group, _ = Group.objects.get_or_create(name=INSTRUCTORS_GROUP)
    group.permissions.set(instructor_permissions())
    return group


def instructors_group_refresh(**_signal: object) -> None:
    """After every migrate: an existing group's rights become INSTRUCTOR_MODELS's again, so a
    right taken away here is taken from deployed sites too, not only from new instructors."""
    if Group.objects.filter(name=INSTRUCTORS_GROUP).exists():
        instructors_group()


def user_set_role(user: User, role: str) -> None:
    """Instructors get the admin (staff) and the instructor group; students neither."""
    user.role = role
    user.is_staff = role == User.Role.INSTRUCTOR
    user.save()
    if user.is_staff:
        user.groups.add(instructors_group())
    else:
        user.groups.remove(*Group.objects.filter(name=INSTRUCTORS_GROUP))


def demo_accounts_ensure() -> list[tuple[str, str, str]]:
    """Create (or reset) the demo instructor and student; returns (username, password, role)."""
    created: list[tuple[str, str, str]] = []
    for username, password, role in DEMO_ACCOUNTS:
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(password)
        user_set_role(user, role)
        created.append((username, password, role))
    return created


def password_changed(user: User, reset_url: str) -> None:
    """A password was changed or reset: the account's API tokens end with the old password (a
    session ends by Django's session hash, a token would not: whoever took the account over would
    keep it through the API and the CLI), and the account's address is told."""
    revoked = Token.objects.filter(user=user).delete()[0] > 0
    password_changed_notify(user, reset_url, token_revoked=revoked)


def password_changed_notify(user: User, reset_url: str, *, token_revoked: bool = False) -> None:
    """Tell the account's address that its password changed, in both languages, with the way
    back if it was not them (OWASP ASVS 2.2.3, 2.5.5)."""
    if not user.email:
        return
    texts = []
    for language in LANGUAGES:
        with translation.override(language):
            texts.append(
                _(
                    "The password of your GraphDojo account %(username)s was just changed. If it was not "
                    "you, choose a new one here at once: %(link)s"
                )
                % {"username": user.username, "link": reset_url}
            )
            if token_revoked:
                texts.append(
                    _(
                        "Your API token stopped working with the old password: make a new one on your account "
                        "page for the graphdojo command."
                    )
                )
    send_mail(_("Your GraphDojo password was changed"), "\n\n".join(texts), None, [user.email])

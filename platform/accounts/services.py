from django.contrib.auth.models import Group, Permission
from django.core.mail import send_mail
from django.utils import translation
from django.utils.translation import gettext as _

from accounts.models import User

DEMO_ACCOUNTS = (
    # (username, password, role)
    ("instructor", "graphdojo-instructor", User.Role.INSTRUCTOR),
    ("student", "graphdojo-student", User.Role.STUDENT),
)
# What an instructor manages in the admin: content and their class's work, not accounts.
INSTRUCTOR_APPS = ("catalog", "quizzes", "interviews", "grading")


def instructors_group() -> Group:
    """The group every instructor belongs to, with the admin rights the role needs."""
    group, _ = Group.objects.get_or_create(name="Instructors")
    group.permissions.set(Permission.objects.filter(content_type__app_label__in=INSTRUCTOR_APPS))
    return group


def user_set_role(user: User, role: str) -> None:
    """Instructors get the admin (staff) and the instructor group; students neither."""
    user.role = role
    user.is_staff = role == User.Role.INSTRUCTOR
    user.save()
    if user.is_staff:
        user.groups.add(instructors_group())
    else:
        user.groups.remove(*Group.objects.filter(name="Instructors"))


def demo_accounts_ensure() -> list[tuple[str, str, str]]:
    """Create (or reset) the demo instructor and student; returns (username, password, role)."""
    created: list[tuple[str, str, str]] = []
    for username, password, role in DEMO_ACCOUNTS:
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(password)
        user_set_role(user, role)
        created.append((username, password, role))
    return created


def password_changed_notify(user: User, reset_url: str) -> None:
    """Tell the account's address that its password changed, in both languages, with the way
    back if it was not them (OWASP ASVS 2.2.3, 2.5.5)."""
    if not user.email:
        return
    texts = []
    for language in ("en", "zh-hans"):
        with translation.override(language):
            texts.append(
                _(
                    "The password of your GraphDojo account %(username)s was just changed. If it was not "
                    "you, choose a new one here at once: %(link)s"
                )
                % {"username": user.username, "link": reset_url}
            )
    send_mail(_("Your GraphDojo password was changed"), "\n\n".join(texts), None, [user.email])

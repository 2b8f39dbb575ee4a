from accounts.models import User

DEMO_ACCOUNTS = (
    # (username, password, role, staff): staff lets the instructor open the admin.
    ("instructor", "graphdojo-instructor", User.Role.INSTRUCTOR, True),
    ("student", "graphdojo-student", User.Role.STUDENT, False),
)


def demo_accounts_ensure() -> list[tuple[str, str, str]]:
    """Create (or reset) the demo instructor and student; returns (username, password, role)."""
    created = []
    for username, password, role, staff in DEMO_ACCOUNTS:
        user, _ = User.objects.get_or_create(username=username)
        user.role, user.is_staff = role, staff
        user.set_password(password)
        user.save()
        created.append((username, password, role))
    return created

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.pseudonyms import pseudonym_generate


class User(AbstractUser):
    class Role(models.TextChoices):
        STUDENT = "student", _("Student")
        INSTRUCTOR = "instructor", _("Instructor")

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.STUDENT)
    # Boards show the pseudonym, never the username; instructors see real names in their course.
    pseudonym = models.CharField(_("pseudonym"), max_length=40, unique=True, default=pseudonym_generate)
    hide_from_public_boards = models.BooleanField(_("hide me from site-wide leaderboards"), default=False)

    class Meta(AbstractUser.Meta):
        swappable = "AUTH_USER_MODEL"
        # Site-wide boards leave out the few who hide: found here without reading every user.
        indexes = [models.Index(fields=["id"], condition=models.Q(hide_from_public_boards=True), name="user_hidden")]

    @property
    def is_instructor(self) -> bool:
        return self.role == self.Role.INSTRUCTOR

    @property
    def can_author(self) -> bool:
        """Who may upload and publish exercises: instructors, and superusers."""
        return self.is_instructor or self.is_superuser

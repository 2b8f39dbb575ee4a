"""What GraphDojo keeps of an LMS: who a platform's user is here, which course a platform's
context is, which assignment item a placed link opens, and where each grade sent back stands.

The platform side (registrations, deployments, contexts, resource links, keys) is django-lti's
(`lti_tool`); these rows tie it to accounts and courses."""

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

ROSTER_SYNC_SHOWN_FOR = timedelta(minutes=10)


class LinkedAccount(models.Model):
    """A platform's user, known by (registration, subject) only: an LMS's email address proves
    nothing about who owns an account here, so it never links one; nor does an issuer, which two
    registrations may share (every Canvas cloud school signs as https://canvas.instructure.com,
    and a registration made for another LMS may claim any issuer)."""

    registration = models.ForeignKey("lti_tool.LtiRegistration", on_delete=models.CASCADE, related_name="accounts",
                                     null=True)  # null: linked before registrations were told apart, never matched
    issuer = models.CharField(max_length=255)  # the registration's, kept for people reading the admin
    sub = models.CharField(_("subject"), max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lti_accounts")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["registration", "sub"], name="lti_one_account_per_subject")]

    def __str__(self) -> str:
        return f"{self.sub} @ {self.issuer}"


class LinkedCourse(models.Model):
    """A platform's course (context) and the course it teaches here."""

    context = models.OneToOneField("lti_tool.LtiContext", on_delete=models.CASCADE, related_name="graphdojo")
    course = models.ForeignKey("courses.Course", on_delete=models.CASCADE, related_name="lti_links")
    # The last roster sync (Names and Role Provisioning): when, and what it did or why it failed.
    roster_synced_at = models.DateTimeField(null=True, blank=True)
    roster_members = models.PositiveIntegerField(default=0)
    roster_error = models.TextField(blank=True)
    # Set when an instructor asks for a sync, cleared when it ends: the page polls while it is set.
    roster_requested_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.context} -> {self.course_id}"

    @property
    def roster_syncing(self) -> bool:
        # A sync whose task was lost stops counting after a while, so a page does not poll forever.
        requested = self.roster_requested_at
        return requested is not None and requested > timezone.now() - ROSTER_SYNC_SHOWN_FOR


class LinkedItem(models.Model):
    """A link the instructor placed in the LMS by deep linking, and the item it opens."""

    resource_link = models.OneToOneField(
        "lti_tool.LtiResourceLink", on_delete=models.CASCADE, related_name="graphdojo"
    )
    item = models.ForeignKey("courses.AssignmentItem", on_delete=models.CASCADE, related_name="lti_links")
    # The platform's line item for this link (from the launch's AGS claim): where scores go.
    lineitem_url = models.URLField(max_length=500, blank=True)

    def __str__(self) -> str:
        return f"{self.resource_link} -> {self.item_id}"


class GradeSync(models.Model):
    """One student's score on one placed link, as the LMS last heard it (or why it did not)."""

    class State(models.TextChoices):
        # With a context: the site's catalogue says "Failed" of a verdict, not of a score sent.
        PENDING = "pending", pgettext_lazy("score sent to an LMS", "Pending")
        SENT = "sent", pgettext_lazy("score sent to an LMS", "Sent")
        FAILED = "failed", pgettext_lazy("score sent to an LMS", "Failed")

    link = models.ForeignKey(LinkedItem, on_delete=models.CASCADE, related_name="grade_syncs")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=8, choices=State.choices, default=State.PENDING)
    reason = models.TextField(blank=True)
    score_given = models.FloatField(null=True, blank=True)
    score_maximum = models.FloatField(null=True, blank=True)
    tries = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["link", "user"]
        constraints = [models.UniqueConstraint(fields=["link", "user"], name="lti_one_grade_sync_per_student")]


class RegistrationLink(models.Model):
    """A one-time link a site administrator makes for an LMS's dynamic registration (LTI Dynamic
    Registration 1.0): whoever opens it from the LMS registers that LMS here, once, before it expires.

    Only a digest of the link's secret is kept, so a copy of the database registers nothing."""

    name = models.CharField(_("name"), max_length=255)
    token_digest = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    registration = models.ForeignKey(
        "lti_tool.LtiRegistration", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

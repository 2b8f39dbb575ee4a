"""The token in an invitation's link: Django's password-reset token machinery, keyed to the
invitation (its id, address and claim), so a link opens one invitation, once, for a while."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.utils.crypto import constant_time_compare
from django.utils.http import base36_to_int

from courses.models import Invitation


class InvitationTokenGenerator(PasswordResetTokenGenerator):
    key_salt = "graphdojo.courses.invitation"

    # Django types these methods for a user; this generator is keyed to an invitation instead.
    def _make_hash_value(self, invitation: Invitation, timestamp: int) -> str:  # type: ignore[override]
        claimed = "" if invitation.claimed_at is None else invitation.claimed_at.isoformat()
        return f"{invitation.pk}|{invitation.course_id}|{invitation.email}|{invitation.role}|{claimed}|{timestamp}"

    def check_token(self, invitation: Invitation | None, token: str | None) -> bool:  # type: ignore[override]
        """Like Django's check, with the invitation's own lifetime (INVITATION_VALID_S)."""
        if not (invitation and token) or token.count("-") != 1:
            return False
        ts_b36, _hash = token.split("-")
        try:
            ts = base36_to_int(ts_b36)
        except ValueError:
            return False
        if not any(
            constant_time_compare(self._make_token_with_timestamp(invitation, ts, secret), token)  # type: ignore[arg-type]
            for secret in [self.secret, *self.secret_fallbacks]
        ):
            return False
        return self._num_seconds(self._now()) - ts <= settings.INVITATION_VALID_S


invitation_tokens = InvitationTokenGenerator()


def invitation_token(invitation: Invitation) -> str:
    return invitation_tokens.make_token(invitation)  # type: ignore[arg-type]

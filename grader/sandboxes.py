"""The sandbox as the platform sees it: the platform reaches the sandbox layer only through here.

Arrows go down (platform → grader → sandbox); this module is the one doorway, so a change
of the sandbox's interface shows up in one place above it.
"""
from __future__ import annotations

from sandbox import Sandbox, SandboxUnavailable, get_sandbox

__all__ = ["Sandbox", "SandboxUnavailable", "get_sandbox"]

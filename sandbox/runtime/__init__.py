"""What runs inside every sandbox: the bootstrap (PID 1), the framing it speaks to the host
in, the zygote that forks a judge's workers, and the lent cgroup as a program inside sees it.

Standard library only, and importing nothing of the rest of ``sandbox`` nor of ``grader``:
nothing of this repository is installed in a sandbox, so the host sends these files along
as one script (``sandbox.protocol.BOOTSTRAP_SOURCE``) that installs them under these very
module names before the bootstrap runs. A judge forked from that bootstrap imports them
from there; the host side (``sandbox.protocol``, ``sandbox.delegation``, the backends)
imports the same files from the repository. ``names`` holds what both sides must spell
alike.
"""

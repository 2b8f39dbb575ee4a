"""The names the host side of a sandbox and the programs inside it must spell alike, defined
once: where things are inside, which environment variables say what, which descriptors
carry what (standard library only; see the package's docstring)."""
from __future__ import annotations

# -- paths inside every sandbox --
WORKDIR = "/job"  # the program's working folder, holding the job's files
OUTPUT_DIR = "out"  # in the working folder: what the program leaves there comes back to the host
CHILD_CGROUP_DIR = "/sandbox-cgroup"  # where the lent cgroup is mounted, one folder per controller
# The lent cgroup's folders under CHILD_CGROUP_DIR: one per cgroup v1 controller, or one v2 folder.
FREEZER, PIDS = "freezer", "pids"
CPUACCT = "cpuacct"  # v1, where the host has it: the CPU every task inside used, ended ones included
UNIFIED = "unified"

# -- what the host lends a sandbox (sandbox/delegation.py), as its program learns it --
CHILD_UID_ENV = "SANDBOX_CHILD_UID"  # the uid every untrusted process runs as, unique on the host
TRUSTED_UID_ENV = "SANDBOX_TRUSTED_UID"  # a second one, for trusted workers that need no root
CHILD_CGROUP_ENV = "SANDBOX_CHILD_CGROUP"  # CHILD_CGROUP_DIR, where a cgroup is lent

# -- what the bootstrap gives a trusted program (the judge) --
ZYGOTE_FD_ENV = "SANDBOX_ZYGOTE_FD"  # the judge's end of the zygote's socket
SECRET_FD_ENV = "SANDBOX_SECRET_FD"  # the descriptor the run's secret is read from (never a variable or a file)
ZYGOTE_FD, SECRET_FD = 3, 4  # ...and where they are
PRELOADED_ENV = "SANDBOX_PRELOADED"  # the modules imported before the job, comma-separated

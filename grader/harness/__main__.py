"""``python3 -m grader.harness``: judge the bundle in the current folder (see judge.py)."""
import sys

from grader.harness.judge import main

sys.exit(main())

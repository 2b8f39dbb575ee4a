"""``python3 -m grader.harness OUT_DIR``: judge the bundle in the current folder (see judge.py)."""
import sys

from grader.harness.judge import main

sys.exit(main(sys.argv[1:]))

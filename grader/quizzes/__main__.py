"""``python -m grader.quizzes validate|report [exercises/] [--backend local|docker|none]``"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.quizzes.library import load_content, report_markdown, validate_all
from sandbox import get_sandbox


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.quizzes")
    parser.add_argument("command", choices=["validate", "report"])
    parser.add_argument("content_dir", nargs="?", default="exercises", type=Path)
    parser.add_argument("--backend", default="local", help="sandbox for the snippet proofs; none skips them")
    args = parser.parse_args(argv)
    if args.command == "report":
        print(report_markdown(load_content(args.content_dir)))
        return 0
    sandbox = None
    if args.backend != "none":
        sandbox = get_sandbox(args.backend)
    problems = validate_all(args.content_dir, sandbox)
    for label, messages in problems.items():
        print(f"{label}: {'ok' if not messages else f'{len(messages)} problem(s)'}")
        for message in messages:
            print(f"  {message}")
    return 1 if any(problems.values()) else 0


if __name__ == "__main__":
    sys.exit(main())

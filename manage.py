#!/usr/bin/env python
"""Django's command-line entry point."""
import os
import sys
from pathlib import Path

# platform/ is a source root, not a package: its apps import as `submissions`, `catalog`...
# Appending (not prepending) keeps the standard library's `platform` module first.
sys.path.append(str(Path(__file__).resolve().parent / "platform"))

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)

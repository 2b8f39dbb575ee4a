"""`make bench`: run every bench/bench_*.py (or those named) and list the results written.

Each module's main() measures ratios within one run and writes bench/results/<name>.json
and .md; the README summarises them.

The site is set up here, before any benchmark is imported: the ones that measure pages and
stored rows in this process (leaderboards, similarity) import the platform's models at their
top, which Django's app registry allows only once django.setup() has run.
"""
import importlib
import os
import sys
import time
from pathlib import Path

import django

HERE = Path(__file__).resolve().parent
PLATFORM = HERE.parent / "platform"


def set_up_the_site() -> None:
    """Django as the tests set it up (config.settings.test; DATABASE_URL picks the database)."""
    if str(PLATFORM) not in sys.path:
        sys.path.insert(0, str(PLATFORM))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    django.setup()


def main(names: list[str]) -> int:
    modules = sorted(p.stem for p in HERE.glob("bench_*.py"))
    if names in (["-h"], ["--help"]):
        print(f"python -m bench [NAME ...]\n{__doc__}\nbenchmarks: {', '.join(modules)}")
        return 0
    chosen = [m for m in modules if not names or m.removeprefix("bench_") in names or m in names]
    if not chosen:
        print(f"no benchmark matches {names}; have: {', '.join(modules)}", file=sys.stderr)
        return 2
    set_up_the_site()
    for name in chosen:
        started = time.monotonic()
        print(f"== {name}", flush=True)
        importlib.import_module(f"bench.{name}").main()
        print(f"== {name} done in {time.monotonic() - started:.0f} s", flush=True)
    for table in sorted((HERE / "results").glob("*.md")):
        print(f"\n{table.read_text()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`make bench`: run every bench/bench_*.py (or those named) and list the results written.

Each module's main() measures ratios within one run and writes bench/results/<name>.json
and .md; the README summarises them.
"""
import importlib
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> int:
    modules = sorted(p.stem for p in HERE.glob("bench_*.py"))
    chosen = [m for m in modules if not names or m.removeprefix("bench_") in names or m in names]
    if not chosen:
        print(f"no benchmark matches {names}; have: {', '.join(modules)}", file=sys.stderr)
        return 2
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

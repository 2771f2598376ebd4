"""Run every benchmark module (``bench_*.py``), or those named: ``python -m benchmarks client``."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import benchmarks


def main(argv: list[str]) -> int:
    names = sorted(
        m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_")
    )
    wanted = [f"bench_{a}" for a in argv] or names
    for name in wanted:
        if name not in names:
            sys.stderr.write(f"no benchmark module {name}\n")
            return 2
        sys.stdout.write(f"\n######## {name}\n")
        sys.stdout.flush()
        importlib.import_module(f"benchmarks.{name}").run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

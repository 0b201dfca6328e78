#!/usr/bin/env python3
"""Writes the plugin manifests this checkout ships (the Claude Code marketplace and its plugin
`dshkit`, the Codex plugin, their hooks files) from the hook registry, so that a plugin runs
exactly the hooks `install-hooks` writes; `--check` fails when a file differs from what the
code would write (tests/install/test_plugin.py runs it)."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from dshkit.install.plugin import files

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when a file is stale")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout [default: this one]")
    args = parser.parse_args()
    stale = []
    for relative, text in files().items():
        path = args.root / relative
        current = path.read_text() if path.exists() else None
        if current == text:
            continue
        if args.check:
            stale.append(str(relative))
            sys.stdout.writelines(
                difflib.unified_diff(
                    (current or "").splitlines(keepends=True),
                    text.splitlines(keepends=True),
                    f"a/{relative}",
                    f"b/{relative}",
                )
            )
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {relative}")
    if stale:
        print(f"stale: {', '.join(stale)}; run scripts/gen-plugins.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

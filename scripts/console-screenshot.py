#!/usr/bin/env python3
"""Takes the README's picture of the console, docs/images/console.png: a real `dshkit serve`
over generated sessions (the console tests' world: friction, optimizer runs, a gate verdict, a
pending handoff), a headless Chromium signed in through the login link, the Overview at
1280x800, reduced to a palette so the file stays small. Needs the test extras and Chromium
(`make test` installs both)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from PIL import Image  # noqa: E402
from tests.support.browser_console import serving  # noqa: E402
from tests.support.console import build_world  # noqa: E402
from tests.support.corpus import Corpus  # noqa: E402

OUT = REPO / "docs" / "images" / "console.png"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        state_dir, root = base / "state", base / "sessions"
        Corpus(root, seed=31).generate(sessions=3, frames=240)
        world = build_world(state_dir, root)
        with serving(base, state_dir, [root], world) as console:
            page = console.open("overview")
            page.wait_for_timeout(500)  # the live stream's first refresh
            raw = base / "console.png"
            page.screenshot(path=str(raw))
        image = Image.open(raw).convert("RGB")
        OUT.parent.mkdir(parents=True, exist_ok=True)
        image.quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(OUT, optimize=True)
    print(f"wrote {OUT.relative_to(REPO)} ({OUT.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Write src/dshkit/provenance/confusables.tsv from Unicode's confusables.txt (UTS #39).

Kept: each character outside ASCII whose prototype is a short run of ASCII letters and
digits (Cyrillic а → a, Greek ο → o, mathematical 𝐢 → i, ℓ → l), after NFKC has had its
say (what NFKC folds already is left out). That is the fold the injection scanner needs to
read look-alike letters as the Latin ones they imitate; Han and other scripts' own
confusions are not its concern. Usage: gen-confusables.py path/to/confusables.txt
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src/dshkit/provenance/confusables.tsv"


def main(source: str) -> None:
    header: list[str] = []
    rows: dict[str, str] = {}
    for line in Path(source).read_text(encoding="utf-8-sig").splitlines():
        if line.startswith("#") and len(header) < 9:
            header.append(line)
            continue
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        source_hex, target_hex, *_ = (part.strip() for part in data.split(";"))
        if " " in source_hex:
            continue
        char = chr(int(source_hex, 16))
        target = "".join(chr(int(h, 16)) for h in target_hex.split())
        if char.isascii() or not target.isascii() or not target.isalnum() or len(target) > 3:
            continue
        if unicodedata.normalize("NFKC", char).casefold() == target.casefold():
            continue  # NFKC folds it already
        rows[char] = target
    lines = [
        "# Look-alike characters and the ASCII letters they imitate, for the injection scanner.",
        "# Derived by scripts/gen-confusables.py from Unicode's confusables.txt, whose header was:",
        *header,
        "# Modified (a subset, reformatted): terms in CONFUSABLES-LICENSE.txt beside this file.",
        "# code point (hex) <TAB> prototype",
    ]
    lines += [f"{ord(c):04X}\t{t}" for c, t in sorted(rows.items())]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(rows)} characters written to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])

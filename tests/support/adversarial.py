"""Long and adversarial texts for the provenance scanners: what a pattern that backtracks, or
a scan that reads a text again for each thing it finds in it, takes minutes on. Tests count
the work done on them (tests/provenance); bench/provenance_scaling.py times them at two
sizes."""

from __future__ import annotations

import base64


def secret_texts(scale: float = 1.0) -> dict[str, str]:
    """For secret redaction, by name: about 200,000 to 400,000 characters each at scale 1."""
    n = int(10_000 * scale)
    return {
        "slashes": "//" * (10 * n),  # detect-secrets' npm pattern alone took minutes on this
        "urls": " ".join(f"https://u{i}:Pw{i}xyz@h.example/{i}" for i in range(n)),
        "begins": "-----BEGIN PRIVATE KEY-----\n" * n,
        "keywords": " ".join(f"password=Ab{i}x9" for i in range(n)),
        "han": "中文" * (10 * n),
        "lines": "\n".join(
            "the quick brown fox, password: see vault, 修复测试" for _ in range(n // 2)
        ),
    }


def many_runs(copies: int = 1) -> str:
    """For the injection scanner: `copies` times 2,500 base64 runs (the first 32 of them
    decode to binary), letters spaced apart, and one 100,000-letter word."""
    runs = " ".join(base64.b64encode(bytes([i % 256]) * 30).decode() for i in range(2_500))
    tricky = runs + " i g n o r e " * 1_000 + "a" * 100_000
    return " ".join([tricky] * copies)

"""Fixtures of the real-harness tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..support.fakes import RefusingProxy


@pytest.fixture
def proxy() -> Iterator[RefusingProxy]:
    """The proxy the real harnesses are pointed at: it refuses and records every attempt to
    reach another host, and the test fails if there was one."""
    with RefusingProxy() as refusing:
        yield refusing
    assert refusing.attempts == [], f"a harness tried to leave 127.0.0.1: {refusing.attempts}"

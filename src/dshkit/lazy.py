"""Names of a module imported on first use: one `__getattr__` and `__dir__` built from a map of
each name to the module it lives in, for package faces that must cost nothing until asked.

A face on the hook path (graft, inject, memory) is imported on every call; its service and
result types are not, until a surface asks for one. Importing this module loads nothing
beyond `sys` (no `typing`, no `importlib`).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def lazy_names(
    namespace: dict[str, Any], homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for the module whose globals are `namespace`: each name of
    `homes` is imported from its module when first asked for, and kept there (later lookups
    never come back). A module is named relative to the module's package, as in a relative
    import (`service` or `.service` is the package's own, `..chromium` one level up), with
    `:attr` when the name is spelled otherwise there (`..chromium:NAMES`). Any other name is
    an AttributeError, as the import system expects (it asks for `__path__` and the like)."""
    package, own = namespace["__package__"], namespace["__name__"]

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:  # a submodule (`from dshkit.graft import live`) is imported as usual
            raise AttributeError(f"module {own!r} has no attribute {name!r}")
        module, _, attribute = home.partition(":")
        value = getattr(_module(module, package), attribute or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__


def _module(relative: str, package: str) -> Any:
    """The module `relative` (as in a relative import from `package`), imported."""
    name = relative.lstrip(".")
    up = max(len(relative) - len(name), 1) - 1  # `.x` and `x`: the package's own
    base = package.rsplit(".", up)[0] if up else package
    full = f"{base}.{name}"
    if full not in sys.modules:
        __import__(full)
    return sys.modules[full]

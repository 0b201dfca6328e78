"""The interpreter's C JSON scanner and encoder (`_json`), as `json` sets them up, for the hot
path.

The `json` package imports `re` and `enum` before it parses anything, a good part of a hook's
cost; `_json` is built into the interpreter. `scanner()(text, at)` is (the JSON value starting
at `at` in `text`, where it ends); StopIteration where no value starts there, ValueError for
a malformed one. `dumps(value)` is compact JSON text."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from typing import Any


def scanner() -> Any:
    """A scanner with json.JSONDecoder's defaults (strict strings; NaN and Infinity read)."""
    import _json  # a built-in module: no import cost

    return _json.make_scanner(_Defaults)  # type: ignore[arg-type]  # (it reads attributes)


def dumps(value: Any) -> str:
    """`value` as compact JSON text, as `json.dumps(value, separators=(",", ":"),
    ensure_ascii=False)` writes it (and orjson, for the values a log holds, but for how a
    float's exponent is spelled: 1e-07 here); TypeError for a value JSON has no form for."""
    import _json

    encode = _json.make_encoder(
        None, _unencodable, _json.encode_basestring, None, ":", ",", False, False, True
    )
    return "".join(encode(value, 0))


def _unencodable(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON")


def line_value(scan: Any, line: bytes) -> Any:
    """The one JSON value a log line holds (UTF-8, blanks around it allowed), read with
    `scan` (a `scanner()`); ValueError where it holds anything else."""
    try:
        text = line.decode("utf-8")
        value, end = scan(text, len(text) - len(text.lstrip()))
    except (StopIteration, RecursionError) as exc:
        raise ValueError(f"not one JSON value: {type(exc).__name__}") from None
    if text[end:].strip():
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


class _Defaults:
    """What `_json.make_scanner` reads: json.JSONDecoder's defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.replace("Infinity", "inf"))  # NaN, Infinity, -Infinity

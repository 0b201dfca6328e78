"""A JSON payload checked against the TypedDict it is declared to be, strictly: every required
key there, no key the type does not name, each value of its field's type (`true` is no
integer; an integer is a number, as JSON has it).

pydantic's TypeAdapter would do this for a TypedDict of `typing_extensions` only on Python
3.11 (what dshkit supports), and the wire types are `typing.TypedDict`s: the hot path imports
no more than `typing`. So this walks the type itself; it knows the forms the wire types use.
"""

from __future__ import annotations

import types
import typing
from typing import Any

# A JSON value's Python types for each plain type a field may have.
_PLAIN: dict[Any, tuple[type, ...]] = {
    str: (str,),
    int: (int,),
    float: (int, float),
    bool: (bool,),
    type(None): (type(None),),
}


def conforms(shape: Any, value: Any, where: str = "$") -> None:
    """AssertionError naming the first place (`$.records[0].source`) where `value` is not a
    `shape`."""
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if shape is Any:
        return
    if typing.is_typeddict(origin or shape):
        _typed_dict(origin or shape, args, value, where)
    elif origin in (typing.Union, types.UnionType):
        problems = []
        for option in args:
            try:
                conforms(option, value, where)
                return
            except AssertionError as exc:
                problems.append(str(exc))
        raise AssertionError(f"{where}: {value!r:.80} is none of {shape}: {'; '.join(problems)}")
    elif origin is typing.Literal:
        assert value in args, f"{where}: {value!r} is not one of {args}"
    elif origin in (list, tuple):
        assert isinstance(value, list), f"{where}: {type(value).__name__}, not a list"
        for n, item in enumerate(value):
            conforms(args[0], item, f"{where}[{n}]")
    elif origin is dict:
        assert isinstance(value, dict), f"{where}: {type(value).__name__}, not an object"
        for key, item in value.items():
            conforms(args[0], key, f"{where} key {key!r}")
            conforms(args[1], item, f"{where}.{key}")
    elif shape in _PLAIN:
        kinds = _PLAIN[shape]
        exact = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        assert exact, f"{where}: {value!r:.80} is not a {shape.__name__}"
    else:
        raise TypeError(f"{where}: no check for the type {shape!r}")


def required(shape: Any) -> set[str]:
    """The fields of a TypedDict that must be there. Not `__required_keys__`: before Python
    3.13 it counts a `NotRequired` field as required when annotations are strings (`from
    __future__ import annotations`, as every module of dshkit has)."""

    def needed(hint: Any) -> bool:
        origin = typing.get_origin(hint)
        return origin is typing.Required or (origin is not typing.NotRequired and shape.__total__)

    hints = typing.get_type_hints(shape, include_extras=True)
    return {field for field, hint in hints.items() if needed(hint)}


def _typed_dict(shape: Any, args: tuple[Any, ...], value: Any, where: str) -> None:
    assert isinstance(value, dict), f"{where}: {type(value).__name__}, not a {shape.__name__}"
    hints = typing.get_type_hints(shape)
    if args:  # a generic TypedDict given its type arguments (ListingJson[HumanItemJson])
        given = dict(zip(shape.__parameters__, args, strict=True))
        hints = {field: _substituted(hint, given) for field, hint in hints.items()}
    missing = sorted(required(shape) - set(value))
    assert not missing, f"{where}: {shape.__name__} without {missing}"
    unknown = sorted(set(value) - set(hints))
    assert not unknown, f"{where}: {shape.__name__} has no field {unknown}"
    for field, item in value.items():
        conforms(hints[field], item, f"{where}.{field}")


def _substituted(hint: Any, given: dict[Any, Any]) -> Any:
    """`hint` with its type variables replaced by the types `given` for them."""
    if isinstance(hint, typing.TypeVar):
        return given.get(hint, hint)
    parameters = getattr(hint, "__parameters__", ())
    if parameters:
        return hint[tuple(given.get(p, p) for p in parameters)]
    return hint

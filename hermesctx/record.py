"""Plain data classes, declared as with :mod:`dataclasses`, without importing it.

``import dataclasses`` costs more CPU than a bare interpreter start (it imports inspect, and
with it ast, dis, tokenize and enum), which a ``hermesctx prune`` on a tiny file must not pay.
:func:`record` covers what hermesctx uses of dataclasses: fields from the class annotations (in
order, a subclass's after its bases'), defaults, :func:`field` with ``default_factory``,
``repr=False`` and ``metadata``, ``frozen=True``, and ``__init__``, ``__repr__``, ``__eq__``
and ``__hash__`` as dataclasses writes them. :func:`fields`, :func:`replace` and
:func:`is_record` also accept real dataclasses (a plugin's ``Options`` may be one)."""

from __future__ import annotations

_MISSING = object()


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen record."""


class Field:
    __slots__ = ("name", "default", "default_factory", "repr", "metadata")

    def __init__(self, default=_MISSING, default_factory=_MISSING, repr=True, metadata=None):  # noqa: A002
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.metadata = {} if metadata is None else metadata

    def __repr__(self) -> str:
        return f"Field(name={self.name!r})"


def field(*, default=_MISSING, default_factory=_MISSING, repr=True, metadata=None):  # noqa: A002
    """A field with more than a default (see :func:`dataclasses.field`)."""
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, repr, metadata)


def record(cls=None, /, *, frozen: bool = False):
    """``@record`` or ``@record(frozen=True)``: ``cls`` with the methods of a dataclass."""

    def wrap(cls):
        return _build(cls, frozen)

    return wrap if cls is None else wrap(cls)


def _build(cls, frozen: bool):
    found: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in getattr(base, "__record_fields__", ()):
            found[f.name] = f
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = cls.__dict__.get(name, _MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name = name
        if isinstance(value, Field):  # the class attribute is the default, as dataclasses has it
            if f.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        found[name] = f
    own = tuple(found.values())
    cls.__record_fields__ = own
    cls.__match_args__ = tuple(f.name for f in own)

    _check_order(own)

    def __init__(self, *args, **kwargs):  # written on the first instance: a class no run makes costs nothing
        init = cls.__init__ = _init(cls, own, frozen)
        init(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = __init__
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = _repr
    if "__eq__" not in cls.__dict__:
        cls.__eq__ = _eq
        if frozen:
            cls.__hash__ = _hash
        elif "__hash__" not in cls.__dict__:
            cls.__hash__ = None  # mutable and compared by value: unhashable, as dataclasses has it
    if frozen:
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr
    return cls


def _check_order(own: tuple) -> None:
    seen_default = False
    for f in own:
        if f.default is not _MISSING or f.default_factory is not _MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _init(cls, own: tuple, frozen: bool):
    """The ``__init__`` of ``cls``, written out as dataclasses writes it (one assignment per
    field, no loop)."""
    params, lines, scope = [], [], {"_MISSING": _MISSING, "_setattr": object.__setattr__}
    for f in own:
        value = f.name
        if f.default_factory is not _MISSING:
            scope[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            value = f"_factory_{f.name}() if {f.name} is _MISSING else {f.name}"
        elif f.default is not _MISSING:
            scope[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        else:
            params.append(f.name)
        lines.append(f"_setattr(self, {f.name!r}, {value})" if frozen else f"self.{f.name} = {value}")
    source = f"def __init__(self, {', '.join(params)}):\n    " + ("\n    ".join(lines) or "pass")
    exec(source, scope)  # noqa: S102 - the source is built from the class's own field names
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _values(obj) -> tuple:
    return tuple(getattr(obj, f.name) for f in obj.__record_fields__)


def _repr(self) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.__record_fields__ if f.repr)
    return f"{type(self).__qualname__}({shown})"


def _eq(self, other):
    if other.__class__ is self.__class__:
        return _values(self) == _values(other)
    return NotImplemented


def _hash(self) -> int:
    return hash(_values(self))


def _frozen_setattr(self, name, value):
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name):
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def is_record(obj) -> bool:
    """Whether ``obj`` (a class or an instance) is a record or a dataclass."""
    return hasattr(obj, "__record_fields__") or hasattr(obj, "__dataclass_fields__")


def fields(obj) -> tuple:
    """The fields of a record or a dataclass (class or instance), in order; each has ``name``,
    ``default``, ``default_factory`` and ``metadata``."""
    own = getattr(obj, "__record_fields__", None)
    if own is not None:
        return own
    import dataclasses

    return dataclasses.fields(obj)


def replace(obj, **changes):
    """A copy of ``obj`` with ``changes`` (see :func:`dataclasses.replace`)."""
    if not hasattr(obj, "__record_fields__"):
        import dataclasses

        return dataclasses.replace(obj, **changes)
    values = {f.name: getattr(obj, f.name) for f in obj.__record_fields__}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {sorted(unknown)[0]!r}")
    values.update(changes)
    return type(obj)(**values)


def asdict(obj) -> dict:
    """A record's fields as a dict (values that are records turned into dicts too)."""
    if not hasattr(obj, "__record_fields__"):
        import dataclasses

        return dataclasses.asdict(obj)
    out = {}
    for f in obj.__record_fields__:
        value = getattr(obj, f.name)
        out[f.name] = value if type(value) in _ATOMS else _plain(value)
    return out


_ATOMS = {int, str, float, bool, type(None)}


def _plain(value):
    if hasattr(value, "__record_fields__") and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value

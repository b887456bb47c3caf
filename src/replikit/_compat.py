"""Renamed parameters, values and attributes: old names keep working for one release.

replikit speaks one vocabulary (DESIGN.md). Where a public name changed, the old one is still
accepted for one release and warns with a :class:`FutureWarning` naming the new one; the
signature (``inspect.signature``, ``help()``, the docs) shows only the new names.

* :func:`renamed` — keyword arguments of a function or method (``rope=`` → ``tolerance=``),
  and optionally old values of a parameter (``interval='z'`` → ``'wald'``);
* :func:`renamed_fields` — a result class's old constructor keywords and attribute names;
* :func:`old_value` — one old value of a parameter, for a function that checks it itself.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["renamed", "renamed_fields", "old_value", "dropped", "REMOVED_IN"]

#: The release in which the old names stop working.
REMOVED_IN = "0.3"


def _warn(message: str, stacklevel: int) -> None:
    warnings.warn(f"{message}; the old name will stop working in replikit {REMOVED_IN}.",
                  FutureWarning, stacklevel=stacklevel + 1)


def _apply(where: str, kwargs: dict, names: Mapping[str, str],
           values: Mapping[str, Mapping[Any, Any]], stacklevel: int) -> dict:
    from .errors import ParameterTypeError

    for old, new in names.items():
        if old in kwargs:
            if new in kwargs:
                raise ParameterTypeError(
                    f"`{old}` is the old name of `{new}` in {where}; give `{new}` only.")
            _warn(f"`{old}` is now `{new}` in {where}", stacklevel)
            kwargs[new] = kwargs.pop(old)
    for param, mapping in values.items():
        value = kwargs.get(param)
        if isinstance(value, str) and value in mapping:
            new_value = mapping[value]
            _warn(f"{param}={value!r} is now {param}={new_value!r} in {where}", stacklevel)
            kwargs[param] = new_value
    return kwargs


def renamed(names: Mapping[str, str] | None = None, *,
            values: Mapping[str, Mapping[Any, Any]] | None = None, **kw_names: str):
    """Decorator: accept old keyword names (and old values) of a function, with a warning.

    Parameters
    ----------
    names : mapping, optional
        Old keyword → new keyword (or give them as keyword arguments: ``rope='tolerance'``).
    values : mapping, optional
        New parameter name → {old value: new value}, for string choices that were renamed.
    **kw_names : str
        Old keyword → new keyword.

    Returns
    -------
    callable
        The decorator. The wrapped function's signature (``__wrapped__``) is the new one.

    Examples
    --------
    >>> import warnings
    >>> @renamed(rope="tolerance", values={"interval": {"z": "wald"}})
    ... def f(*, tolerance=0.01, interval="wald"):
    ...     return tolerance, interval
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     f(rope=0.05, interval="z")
    (0.05, 'wald')
    >>> [type(x.message).__name__ for x in w]
    ['FutureWarning', 'FutureWarning']
    """
    mapping = {**(names or {}), **kw_names}
    value_map = dict(values or {})

    def decorate(func: Callable) -> Callable:
        where = f"{func.__qualname__.replace('.__init__', '')}()"

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if kwargs:
                kwargs = _apply(where, kwargs, mapping, value_map, stacklevel=3)
            return func(*args, **kwargs)

        wrapper.__renamed__ = {**getattr(func, "__renamed__", {}), **mapping}
        return wrapper

    return decorate


def renamed_fields(names: Mapping[str, str] | None = None, *,
                   values: Mapping[str, Mapping[Any, Any]] | None = None, **kw_names: str):
    """Class decorator: a (frozen) dataclass accepts its old field names as constructor
    keywords and as read-only attributes, each with a warning.

    Apply it above ``@dataclass``.

    Parameters
    ----------
    names : mapping, optional
        Old field name → new field name (or as keyword arguments).
    values : mapping, optional
        Field → {old value: new value}.
    **kw_names : str
        Old field name → new field name.

    Returns
    -------
    callable
        The class decorator.

    Examples
    --------
    >>> import warnings
    >>> from dataclasses import dataclass
    >>> @renamed_fields(rope="tolerance")
    ... @dataclass(frozen=True)
    ... class R:
    ...     tolerance: float
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     r = R(rope=0.1)
    ...     r.rope
    0.1
    """
    mapping = {**(names or {}), **kw_names}

    def decorate(cls):
        cls.__init__ = renamed(mapping, values=values)(cls.__init__)
        for old, new in mapping.items():
            setattr(cls, old, _alias(cls.__name__, old, new))
        return cls

    return decorate


def _alias(owner: str, old: str, new: str) -> property:
    def get(self):
        _warn(f"`{owner}.{old}` is now `{owner}.{new}`", stacklevel=2)
        return getattr(self, new)

    return property(get, doc=f"Old name of :attr:`{new}` (warns).")


def old_value(value: Any, param: str, mapping: Mapping[Any, Any], where: str,
              stacklevel: int = 3) -> Any:
    """``mapping[value]`` with a warning when ``value`` is an old value of ``param``, else
    ``value``.

    Parameters
    ----------
    value : object
        The value given.
    param : str
        The parameter's (new) name.
    mapping : mapping
        Old value → new value.
    where : str
        The function, for the message (``'meta_analysis()'``).
    stacklevel : int, default 3
        Passed to :func:`warnings.warn` (3: the caller of the function that calls this).

    Returns
    -------
    object
        The value in the new vocabulary.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     old_value("z", "interval", {"z": "wald"}, "meta_analysis()")
    'wald'
    """
    if isinstance(value, str) and value in mapping:
        new = mapping[value]
        _warn(f"{param}={value!r} is now {param}={new!r} in {where}", stacklevel)
        return new
    return value


def dropped(*names: str):
    """Decorator: keywords that left a signature are accepted for one release, ignored, and
    warned about.

    For the ``option=``-style keywords that told a function which command-line flag its
    messages should name: the library's messages now name its own parameters, and the command
    line shows its flags.

    Parameters
    ----------
    *names : str
        The keywords that left the signature.

    Returns
    -------
    callable
        The decorator. The signature (``__wrapped__``) does not show ``names``.

    Examples
    --------
    >>> import warnings
    >>> @dropped("option")
    ... def make(model):
    ...     return model
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     make("lr", option="--models")
    'lr'
    >>> type(w[0].message).__name__
    'FutureWarning'
    """
    def decorate(func: Callable) -> Callable:
        where = f"{func.__qualname__.replace('.__init__', '')}()"

        method = "." in func.__qualname__ and not func.__qualname__.endswith(".__init__")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for name in names:
                if name in kwargs:
                    kwargs.pop(name)
                    here = f"{type(args[0]).__name__}.{func.__name__}()" if method and args \
                        else where  # the user's class (Scores), not a private base
                    _warn(f"`{name}` of {here} is no longer used (messages name the "
                          "parameters; the command line shows its flags)", stacklevel=2)
            return func(*args, **kwargs)

        wrapper.__dropped__ = (*getattr(func, "__dropped__", ()), *names)
        return wrapper

    return decorate

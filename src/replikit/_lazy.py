"""Lazy exports for capability packages: ``import replikit.replicate`` stays cheap.

A package lists ``{public name: submodule}`` and binds the three module attributes::

    __getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)

A name is imported from its submodule on first access (PEP 562).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: dict[str, str]
                 ) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """Module-level ``__getattr__``, ``__dir__`` and ``__all__`` for ``package``'s ``exports``."""
    names = sorted(exports)

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    def __dir__() -> list[str]:
        return list(names)

    return __getattr__, __dir__, names

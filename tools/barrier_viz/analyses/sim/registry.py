"""The interpreter's handler table: one entry per op name, filled by registration.

An op family's module (`ops/`) marks each handler with `@handles("dialect.op", ...)`; the
installed extension (`extension.install`) registers its own through `register`. `Machine._exec`
dispatches from `HANDLERS` alone, so a new op is a new handler here, never a new branch in the
core. A handler is called as `handler(machine, op, env, who, iteration)`: it updates `env` (the
partition's values) and the machine's state, and returns None, or a generator that yields
scheduler requests (`Wait`, `Step`, `Join`) and the generators of the regions it enters.

Registering a second, different handler for a name is an error: which one ran would depend on
import order.
"""

from __future__ import annotations

from typing import Any, Callable

Handler = Callable[..., Any]

HANDLERS: dict[str, Handler] = {}


def register(name: str, handler: Handler) -> None:
    """Make `handler` the one that runs op `name` (registering the same handler again is a no-op)."""
    known = HANDLERS.get(name)
    if known is not None and known is not handler:
        raise ValueError(f"two interpreter handlers for {name}: {known.__qualname__} and {handler.__qualname__}")
    HANDLERS[name] = handler


def handles(*names: str) -> Callable[[Handler], Handler]:
    """Decorator: register the function as the handler of each op in `names`."""

    def mark(handler: Handler) -> Handler:
        for name in names:
            register(name, handler)
        return handler

    return mark

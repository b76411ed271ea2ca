"""The error tree of the dogana protocol.

``DoganaError`` is the root of ``InvalidContract`` (with its subclass ``SerializationError``),
``RejectedDelivery``, ``PlanningError`` and ``InconsistentPublication``. As in the Python
reference, ``InvalidContract``, ``RejectedDelivery`` and ``PlanningError`` are also
``ValueError``. ``ReceiverError`` is a receiver's own operational failure (SQLite, reading a
file, its configuration): it is not a protocol decision, so it is not a ``DoganaError``.

Every protocol error raised by the Rust core carries the problem's parts as attributes:
``field`` (the argument or JSON path at fault), ``value``, ``rule`` (the rule of the protocol
it breaks, such as ``"MAN-07"``) and ``reason``; a ``RejectedDelivery`` also has ``check``
(``"manifest"`` or ``"transition"``), a ``PlanningError`` ``goal`` and ``problems`` (one
``(field, value, rule, reason)`` tuple per candidate that failed).
"""

from typing import Optional, Tuple

__all__ = [
    "DoganaError",
    "InvalidContract",
    "SerializationError",
    "RejectedDelivery",
    "PlanningError",
    "InconsistentPublication",
    "ReceiverError",
]


class DoganaError(Exception):
    """The root of every error the protocol raises."""

    field: Optional[str] = None
    value: Optional[str] = None
    rule: Optional[str] = None
    reason: Optional[str] = None


class InvalidContract(DoganaError, ValueError):
    """A declaration is invalid in itself: a contract, a shape or a manifest's fields."""


class SerializationError(InvalidContract):
    """A wire document is refused before normalization; ``field`` is the JSON path."""


class RejectedDelivery(DoganaError, ValueError):
    """A ledger does not admit a manifest (``Ledger.apply``); ``check`` names the failed check."""

    check: Optional[str] = None


class PlanningError(DoganaError, ValueError):
    """No read can establish what a reader asked for; ``problems`` says why for each shape."""

    goal: Optional[str] = None
    problems: Tuple[Tuple[str, str, str, str], ...] = ()


class InconsistentPublication(DoganaError):
    """Receipts that do not continue a ledger's chain, or a ledger that differs from one a
    receipt names."""


class ReceiverError(Exception):
    """A receiver's own failure (SQLite, reading the delivered file, its configuration).
    Nothing was committed. ``code`` is its stable code (``"DGN-401"``, listed in
    docs/errors.md) and ``transient`` whether retrying later can help (a lock held past the
    wait, a lost connection, a full disk)."""

    code: Optional[str] = None
    transient: bool = False

"""dogana: what each delivery of a table proves (wire format version 4).

The protocol's Python API as its documents spell it, backed by the Rust implementation:
contracts and shapes, manifests, ledgers and regions, the gate and its receipts, claims,
planning and groups, and a receiver on SQLite with the row checks of delivered files.
Code written for ``from dogana import ...`` runs with ``from dogana_rs import ...``.

Datetimes are aware ``datetime`` values (a naive one raises ``InvalidContract``), dates
``date``, durations ``timedelta``; ``timedelta.max`` is the limit that expires nothing.
"""

from . import errors
from ._native import (
    NO_PUBLICATION,
    TOGETHER,
    WIRE_VERSION,
    Action,
    ApplyPlan,
    Check,
    Claims,
    Contract,
    Delivery,
    Extraction,
    Gate,
    Group,
    Ledger,
    Manifest,
    Receipt,
    Region,
    RegionClaim,
    Requirement,
    RowReport,
    Shape,
    Snapshot,
    Store,
    Transition,
    VerifyReport,
    check_rows,
    column_hash,
    next_extraction,
    plan_delivery,
    plan_together,
    pull,
    push,
)
from .errors import (
    DoganaError,
    InconsistentPublication,
    InvalidContract,
    PlanningError,
    ReceiverError,
    RejectedDelivery,
    SerializationError,
)

#: The name the first Python reference gave the planner's read request.
ExtractionRequest = Extraction

__all__ = [
    "Action",
    "ApplyPlan",
    "Check",
    "Claims",
    "Contract",
    "Delivery",
    "DoganaError",
    "Extraction",
    "ExtractionRequest",
    "Gate",
    "Group",
    "InconsistentPublication",
    "InvalidContract",
    "Ledger",
    "Manifest",
    "NO_PUBLICATION",
    "PlanningError",
    "Receipt",
    "ReceiverError",
    "Region",
    "RegionClaim",
    "RejectedDelivery",
    "Requirement",
    "RowReport",
    "SerializationError",
    "Shape",
    "Snapshot",
    "Store",
    "TOGETHER",
    "Transition",
    "VerifyReport",
    "WIRE_VERSION",
    "check_rows",
    "column_hash",
    "errors",
    "next_extraction",
    "plan_delivery",
    "plan_together",
    "pull",
    "push",
]

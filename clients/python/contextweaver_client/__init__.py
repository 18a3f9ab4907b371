"""ContextWeaver's Python client: `Client` (blocking) and `AsyncClient` (asyncio), the same operations.

Results are typed dataclasses (models.py); API errors are exceptions carrying the error body (errors.py).
"""

from .api import PRESETS
from .client import AsyncClient, Client
from .errors import (
    ApiError,
    BadRequest,
    Conflict,
    ContextWeaverError,
    Forbidden,
    NotFound,
    RateLimited,
    ServerError,
    TooLarge,
    Unauthorized,
    Unreachable,
)
from .exchange import Retry
from .models import (
    Accepted,
    Change,
    ChangePage,
    Edge,
    Entity,
    Forgotten,
    Graph,
    Interaction,
    InteractionPage,
    Memory,
    NewInteraction,
    Recall,
    Recalled,
    Session,
)

__all__ = [
    "PRESETS", "Accepted", "ApiError", "AsyncClient", "BadRequest", "Change", "ChangePage", "Client", "Conflict",
    "ContextWeaverError", "Edge", "Entity", "Forbidden", "Forgotten", "Graph", "Interaction", "InteractionPage",
    "Memory", "NewInteraction", "NotFound", "RateLimited", "Recall", "Recalled", "Retry", "ServerError", "Session",
    "TooLarge", "Unauthorized", "Unreachable",
]

"""ContextWeaver's Python client: `Client` (blocking) and `AsyncClient` (asyncio), the same operations.

A person logs in (`login=Login(...)`) for the curation operations (curation.py), which tokens may not do.
adapters.py turns OpenAI and LangChain conversations into interactions linked by the frameworks' own ids.
Results are typed dataclasses (models.py); API errors are exceptions carrying the error body (errors.py).
"""

from .api import PRESETS
from .client import AsyncClient, Client
from .curation_models import (
    ActPage,
    CuratedEntity,
    CurationAct,
    EdgeAct,
    EdgeBulk,
    EntityAct,
    EntityPage,
    MemoryAct,
    Repeat,
    ReviewEdge,
    ReviewPage,
    Undone,
)
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
    DeclaredLink,
    Edge,
    Entity,
    Forgotten,
    Graph,
    Interaction,
    InteractionPage,
    Link,
    Memory,
    MemoryPage,
    NewInteraction,
    Page,
    Recall,
    Recalled,
    Risk,
    Session,
    StoreDeleted,
    StoreItem,
    StorePut,
)
from .people import Login

__all__ = [
    "ActPage", "CuratedEntity", "CurationAct", "EdgeAct", "EdgeBulk", "EntityAct", "EntityPage", "Login", "MemoryAct",
    "Page", "Repeat", "ReviewEdge", "ReviewPage", "Undone",
    "PRESETS", "Accepted", "ApiError", "AsyncClient", "BadRequest", "Change", "ChangePage", "Client", "Conflict",
    "ContextWeaverError", "Edge", "Entity", "Forbidden", "Forgotten", "Graph", "Interaction", "InteractionPage",
    "Memory", "NewInteraction", "NotFound", "RateLimited", "Recall", "Recalled", "Retry", "ServerError", "Session",
    "TooLarge", "Unauthorized", "Unreachable",
    "DeclaredLink", "Link", "MemoryPage", "Risk",
    "StoreDeleted", "StoreItem", "StorePut",
]

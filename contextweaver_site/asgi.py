"""ASGI entry point: HTTP through Django, websockets through Channels (authenticated sessions).

HTTP passes RequestGuard first (request_guard.py): body size, credentials for large bodies and the
body deadline are enforced before Django reads a byte of the body.

Websockets pass SameOriginValidator (memory/live/origin.py: the Origin header must be the socket's own
scheme, host and port, with the host in ALLOWED_HOSTS, or one of CSRF_TRUSTED_ORIGINS; so no other site,
port or scheme can open a socket with a visitor's cookie) and AuthMiddlewareStack (the Django session
cookie gives scope["user"]). Lifespan starts the live-view bridge (docs/live.md).
"""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextweaver_site.settings.base")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from memory.engine.extraction import warm_up  # noqa: E402
from memory.live.lifespan import lifespan_app  # noqa: E402
from memory.live.origin import SameOriginValidator  # noqa: E402
from memory.providers import get_embedder  # noqa: E402
from memory.routing import websocket_urlpatterns  # noqa: E402

from .request_guard import RequestGuard  # noqa: E402

# Load jieba's dictionary and the embedding model now (a few seconds), not in the first request.
warm_up()
get_embedder().embed_one("warm-up")
# The loaded model and dictionary are ~500k long-lived objects; a full GC pass over them took ~300 ms
# (docs/benchmarks.md). Freezing moves them out of the collector's way.
gc.collect()
gc.freeze()

application = ProtocolTypeRouter(
    {
        "http": RequestGuard(django_asgi_app),
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        "lifespan": lifespan_app,
    }
)

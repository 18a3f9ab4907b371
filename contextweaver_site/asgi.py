"""ASGI entry point: HTTP through Django, websockets through Channels (authenticated sessions)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextweaver_site.settings.base")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from memory.engine.extraction import segment  # noqa: E402
from memory.routing import websocket_urlpatterns  # noqa: E402

segment("预热 warm-up")  # load jieba's dictionary (about 1 s) now, not in the first Chinese request

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

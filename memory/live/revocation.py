"""A live socket lives no longer than the login it was opened with (docs/live.md, "Who may connect").

Every websocket of a logged-in user joins the group `user.<id>`. Two things end its stream:

- At once: `sockets_close(user_id, session_key=…)` when the user logs out (only the sockets opened
  with that Django session: the same user's other browsers keep theirs), and `sockets_close(user_id)`
  when the account is deactivated or deleted (every socket of the user). The message reaches every
  web-server process: through PostgreSQL (`pg_notify` on `cw_auth`, delivered at commit to each
  server's listener, memory/live/listener.py) with the embedded "notify" transport, through the shared
  channel layer (after commit) with Redis.
- As a safety net: before a socket sends anything it asks `login_user` again (one session read, one
  user read): a session that was flushed, expired, logged out elsewhere, invalidated by a password
  change, or whose user was deactivated, gets no more content and the socket is closed. This also
  covers what sends no signal (`QuerySet.update(is_active=False)`, `clearsessions`, a notification
  lost while a listener reconnected).

The signal receivers (memory/live/sessions_end.py) only call the functions here.
"""

from __future__ import annotations

import hashlib
import json
import logging
from importlib import import_module
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model, load_backend
from django.db import connection, transaction
from django.utils.crypto import constant_time_compare

logger = logging.getLogger(__name__)

CHANNEL = "cw_auth"  # the NOTIFY channel of revocations (payload {"u": user id, "s": session tag or null})
EVENT_TYPE = "live.revoked"  # handled by the consumers' live_revoked


def user_group(user_id: int) -> str:
    return f"user.{user_id}"


def session_tag(session_key: str | None) -> str | None:
    """What a revocation names a Django session by: a hash, so the key itself never travels (NOTIFY
    payloads, Redis)."""
    if not session_key:
        return None
    return hashlib.sha256(f"cw-live-session:{session_key}".encode()).hexdigest()[:32]


def concerns(message: dict[str, Any], tag: str | None) -> bool:
    """Whether a revocation message closes a socket opened with the session of this tag."""
    return message.get("session") is None or message.get("session") == tag


def sockets_close(user_id: int, *, session_key: str | None = None) -> None:
    """Close the user's live sockets (only those opened with `session_key`, if given) in every process,
    once the current transaction commits (at once outside one)."""
    tag = session_tag(session_key)
    if getattr(settings, "LIVE_TRANSPORT", "layer") == "notify":
        payload = json.dumps({"u": user_id, "s": tag})
        with connection.cursor() as cursor:  # delivered at commit, to every server's listener
            cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, payload])
        # A process without a listener (tests, commands) may hold sockets of its own in its in-memory layer.
        transaction.on_commit(lambda: _send_local(user_id, tag))
    else:
        transaction.on_commit(lambda: _send(user_id, tag))


def parse_notice(payload: str) -> tuple[int, str | None] | None:
    """A `cw_auth` payload as (user id, session tag), or None if malformed."""
    try:
        data = json.loads(payload)
        tag = data.get("s")
        return int(data["u"]), (str(tag) if tag is not None else None)
    except (ValueError, KeyError, TypeError, AttributeError):
        logger.warning("ignoring malformed %s payload %r", CHANNEL, payload)
        return None


async def deliver(layer: Any, user_id: int, tag: str | None) -> None:
    """Send a revocation to the user's group of this layer (the listener calls it for each notice)."""
    await layer.group_send(user_group(user_id), {"type": EVENT_TYPE, "session": tag})


def _send_local(user_id: int, tag: str | None) -> None:
    from . import listener

    if listener.is_running():  # the listener of this process delivers the NOTIFY itself
        return
    _send(user_id, tag)


def _send(user_id: int, tag: str | None) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer) and not layer.groups.get(user_group(user_id)):
        return  # nobody of this user in this process: skip the event-loop round trip
    try:
        async_to_sync(deliver)(layer, user_id, tag)
    except Exception:  # noqa: BLE001 - the sockets still stop at their next send (login_user)
        logger.exception("live: closing the sockets of user %s failed", user_id)


def login_user(session_key: str | None) -> Any | None:
    """The active user the Django session `session_key` is logged in as now, or None: logged out, flushed,
    expired, its auth hash no longer valid (password changed), or the user deactivated or deleted.
    django.contrib.auth.get_user's rule, without its side effects (it would flush or cycle the session)."""
    if not session_key:
        return None
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    try:
        user_id = get_user_model()._meta.pk.to_python(store[SESSION_KEY])
        backend_path = store[BACKEND_SESSION_KEY]
    except (KeyError, ValueError):
        return None
    if backend_path not in settings.AUTHENTICATION_BACKENDS:
        return None
    user = load_backend(backend_path).get_user(user_id)
    if user is None or not user.is_active:
        return None
    session_hash = store.get(HASH_SESSION_KEY)
    if not session_hash:
        return None
    hashes = [user.get_session_auth_hash(), *user.get_session_auth_fallback_hash()]
    if not any(constant_time_compare(session_hash, good) for good in hashes):
        return None
    return user


def scope_session_key(scope: dict[str, Any]) -> str | None:
    """The Django session key a websocket was opened with (its session cookie)."""
    return (scope.get("cookies") or {}).get(settings.SESSION_COOKIE_NAME) or None

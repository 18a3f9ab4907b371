"""Signal receivers that end live sockets with the login they were opened with (memory/live/revocation.py).

- logout (`user_logged_out`): the sockets opened with that browser's Django session;
- an account saved inactive, or deleted: every socket of the user.

Connected in MemoryConfig.ready(); the receivers only call the revocation service.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_delete, post_save

from .revocation import sockets_close


def on_logout(sender: Any, request: Any = None, user: Any = None, **kwargs: Any) -> None:
    if user is None or getattr(user, "pk", None) is None:
        return
    session = getattr(request, "session", None)
    # Without a session key there is no socket to pick out: close them all rather than none.
    sockets_close(user.pk, session_key=getattr(session, "session_key", None))


def on_user_saved(sender: Any, instance: Any, created: bool = False, update_fields: Any = None,
                  **kwargs: Any) -> None:
    if created or getattr(instance, "is_active", True):
        return
    if update_fields is not None and "is_active" not in update_fields:
        return
    sockets_close(instance.pk)


def on_user_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    if instance.pk is not None:
        sockets_close(instance.pk)


def connect() -> None:
    user_model = get_user_model()
    user_logged_out.connect(on_logout, dispatch_uid="memory.live.sockets_close_on_logout")
    post_save.connect(on_user_saved, sender=user_model, dispatch_uid="memory.live.sockets_close_on_deactivation")
    post_delete.connect(on_user_deleted, sender=user_model, dispatch_uid="memory.live.sockets_close_on_user_delete")

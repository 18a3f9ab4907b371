"""The live view with REDIS_URL: every process publishes into Redis; no PostgreSQL listener runs.

A private redis-server is started on a free port for this module (skipped, with the reason
printed, only if redis-server is not installed).
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model

from memory.models import GraphChange, Membership, Role

from . import test_live_support as support
from .test_live_support import catch_up, change_ids, open_socket, receive_until, run_writer, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)
redis_url = support.redis_url
redis_server_process = support.redis_server_process


def test_change_made_in_another_process_reaches_the_socket_through_redis(redis_server_process, redis_url,
                                                                         agent_session):
    user = get_user_model().objects.create_user("viewer", password="pw")
    Membership.objects.create(project=agent_session.project, user=user, role=Role.VIEWER)
    with open_socket(redis_server_process, agent_session.pk, session_cookie(user)) as ws:
        start = GraphChange.objects.filter(session=agent_session).order_by("-id").values_list("id", flat=True)[0]
        catch_up(ws, start)
        run_writer(
            "from memory.engine.ingest import InteractionInput, interactions_accept\n"
            "from memory.models import AgentSession\n"
            f"s = AgentSession.objects.get(pk={agent_session.pk})\n"
            "interactions_accept(session=s, items=[InteractionInput('user_input', 'Flight lands at 9:40')], "
            "actor='cli')\n",
            REDIS_URL=redis_url,
        )
        messages = receive_until(ws, lambda ms: "interaction.kept" in json.dumps(ms))
    expected = list(GraphChange.objects.filter(session=agent_session, id__gt=start).order_by("id")
                    .values_list("id", flat=True))
    assert change_ids(messages) == expected
    assert "live: listening" not in redis_server_process.log_text()  # no bridge with Redis

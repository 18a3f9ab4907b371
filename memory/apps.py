from django.apps import AppConfig
from django.core.signals import setting_changed
from django.db.models.signals import post_migrate


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory engine"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers system checks)
        from .api import schema  # noqa: F401  (registers the token scheme with drf-spectacular)
        from .conf import reload_memory_settings

        setting_changed.connect(reload_memory_settings, dispatch_uid="memory.reload_settings")
        from .engine.vector_index import cached_spaces_clear

        post_migrate.connect(cached_spaces_clear, dispatch_uid="memory.cached_spaces_clear")
        from .engine.jobs import scheduler_set
        from .tasks import QueueScheduler

        scheduler_set(QueueScheduler())  # the engine's job port (engine/jobs.py)
        from .live import sessions_end

        sessions_end.connect()  # logout / deactivation close the user's live sockets (docs/live.md)

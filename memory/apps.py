from django.apps import AppConfig
from django.core.signals import setting_changed
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


def _session_defaults(sender, connection, **kwargs) -> None:
    """Per-connection search settings, so a recall's kNN needs no transaction of its own to set them."""
    from .conf import memory_settings

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"SET hnsw.ef_search = {int(memory_settings.HNSW_EF_SEARCH)}")


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory engine"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers system checks)
        from .conf import reload_memory_settings

        setting_changed.connect(reload_memory_settings, dispatch_uid="memory.reload_settings")
        connection_created.connect(_session_defaults, dispatch_uid="memory.session_defaults")
        from .engine.vector_index import cached_spaces_clear

        post_migrate.connect(cached_spaces_clear, dispatch_uid="memory.cached_spaces_clear")

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

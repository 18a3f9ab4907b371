from django.apps import AppConfig
from django.core.signals import setting_changed


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory engine"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers system checks)
        from .conf import reload_memory_settings

        setting_changed.connect(reload_memory_settings, dispatch_uid="memory.reload_settings")

from django.apps import AppConfig


class CurationConfig(AppConfig):
    name = "curation"
    verbose_name = "Curation"

    def ready(self) -> None:
        from memory.engine.maintenance.scrub import FreeText, free_text_register

        from .models import CurationAct

        free_text_register(FreeText(CurationAct, ("reason",)))  # a reason may quote what it judged

from django.apps import AppConfig


class AdministrationConfig(AppConfig):
    name = "administration"
    verbose_name = "Administration"

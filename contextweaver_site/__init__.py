"""The Django project: settings, URL routing, ASGI entry point and the embedded database."""

from django.urls import path

from .consumers import SessionGraphConsumer

websocket_urlpatterns = [path("ws/sessions/<int:session_id>/", SessionGraphConsumer.as_asgi())]

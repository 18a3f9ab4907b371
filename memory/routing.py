from django.urls import path

from administration.consumers import ForgetJobsConsumer

from .consumers import SessionGraphConsumer

websocket_urlpatterns = [
    path("ws/sessions/<int:session_id>/", SessionGraphConsumer.as_asgi()),
    path("ws/projects/<slug:project_slug>/forget/", ForgetJobsConsumer.as_asgi()),
]

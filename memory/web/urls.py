"""Server-rendered pages (login required): projects, a project's sessions, a session's live graph."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("p/<slug:project_slug>/", views.project_detail, name="project-detail"),
    path("p/<slug:project_slug>/recalls/", views.project_recalls, name="project-recalls"),
    path("p/<slug:project_slug>/sessions/<int:session_id>/", views.session_detail, name="session-detail"),
]

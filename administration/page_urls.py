"""Administration pages (login required), beside the memory pages."""

from django.urls import path

from . import views

urlpatterns = [
    path("p/<slug:project_slug>/settings/", views.project_settings, name="project-settings"),
    path("p/<slug:project_slug>/forget/", views.forget_page, name="project-forget"),
]

"""Curation pages (login required), beside the memory pages."""

from django.urls import path

from . import views

urlpatterns = [
    path("p/<slug:project_slug>/review/", views.review_queue_page, name="review-queue"),
]

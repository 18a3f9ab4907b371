"""Curation API routes, mounted under /api/ beside the agent API (docs/curation.md)."""

from django.urls import path

from . import api

urlpatterns = [
    path("projects/<slug:project_slug>/edges/", api.EdgeListDrawApi.as_view(), name="api-edges"),
    path("projects/<slug:project_slug>/edges/bulk/", api.EdgeBulkApi.as_view(), name="api-edges-bulk"),
    path("projects/<slug:project_slug>/edges/<int:edge_id>/", api.EdgeDetailApi.as_view(), name="api-edge"),
    path("projects/<slug:project_slug>/memories/<int:memory_id>/", api.MemoryCurateApi.as_view(),
         name="api-memory"),
    path("projects/<slug:project_slug>/memories/<int:memory_id>/repeats/", api.MemoryRepeatsApi.as_view(),
         name="api-memory-repeats"),
    path("projects/<slug:project_slug>/entities/", api.EntityListApi.as_view(), name="api-entities"),
    path("projects/<slug:project_slug>/entities/<int:entity_id>/", api.EntityDetailApi.as_view(), name="api-entity"),
    path("projects/<slug:project_slug>/entities/<int:entity_id>/merge/", api.EntityMergeApi.as_view(),
         name="api-entity-merge"),
    path("projects/<slug:project_slug>/entities/<int:entity_id>/split/", api.EntitySplitApi.as_view(),
         name="api-entity-split"),
    path("projects/<slug:project_slug>/entities/<int:entity_id>/dismiss/", api.EntityDismissApi.as_view(),
         name="api-entity-dismiss"),
    path("projects/<slug:project_slug>/curation/actions/", api.ActListApi.as_view(), name="api-curation-actions"),
    path("projects/<slug:project_slug>/curation/actions/<int:act_id>/undo/", api.ActUndoApi.as_view(),
         name="api-curation-undo"),
]

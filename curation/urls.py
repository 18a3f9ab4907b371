"""Curation API routes, mounted under /api/ beside the agent API (docs/curation.md)."""

from django.urls import path

from .api import acts, edges, entities, memories

urlpatterns = [
    path("projects/<slug:project_slug>/edges/", edges.EdgeListDrawApi.as_view(), name="api-edges"),
    path("projects/<slug:project_slug>/edges/bulk/", edges.EdgeBulkApi.as_view(), name="api-edges-bulk"),
    path("projects/<slug:project_slug>/edges/<int:edge_id>/", edges.EdgeDetailApi.as_view(), name="api-edge"),
    path("projects/<slug:project_slug>/memories/<int:memory_id>/", memories.MemoryCurateApi.as_view(),
         name="api-memory"),
    path("projects/<slug:project_slug>/memories/<int:memory_id>/repeats/", memories.MemoryRepeatsApi.as_view(),
         name="api-memory-repeats"),
    path("projects/<slug:project_slug>/entities/", entities.EntityListApi.as_view(), name="api-entities"),
    path("projects/<slug:project_slug>/entities/<int:entity_id>/", entities.EntityDetailApi.as_view(),
         name="api-entity"),
    path("projects/<slug:project_slug>/entities/<int:entity_id>/merge/", entities.EntityMergeApi.as_view(),
         name="api-entity-merge"),
    path("projects/<slug:project_slug>/entities/<int:entity_id>/split/", entities.EntitySplitApi.as_view(),
         name="api-entity-split"),
    path("projects/<slug:project_slug>/entities/<int:entity_id>/dismiss/", entities.EntityDismissApi.as_view(),
         name="api-entity-dismiss"),
    path("projects/<slug:project_slug>/curation/actions/", acts.ActListApi.as_view(), name="api-curation-actions"),
    path("projects/<slug:project_slug>/curation/actions/<int:act_id>/undo/", acts.ActUndoApi.as_view(),
         name="api-curation-undo"),
]

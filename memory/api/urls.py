from django.urls import path

from . import memories, otlp, views

urlpatterns = [
    path("projects/<slug:project_slug>/sessions/", views.SessionListCreateApi.as_view(), name="api-sessions"),
    path("projects/<slug:project_slug>/sessions/<int:session_id>/interactions/",
         views.InteractionListAcceptApi.as_view(), name="api-interactions"),
    path("projects/<slug:project_slug>/sessions/<int:session_id>/interactions/<int:interaction_id>/",
         views.InteractionDetailApi.as_view(), name="api-interaction"),
    path("projects/<slug:project_slug>/sessions/<int:session_id>/interactions/<int:interaction_id>/promote/",
         views.InteractionPromoteApi.as_view(), name="api-interaction-promote"),
    path("projects/<slug:project_slug>/sessions/<int:session_id>/interactions/<int:interaction_id>/retry/",
         views.InteractionRetryApi.as_view(), name="api-interaction-retry"),
    path("projects/<slug:project_slug>/sessions/<int:session_id>/graph/", views.SessionGraphApi.as_view(),
         name="api-graph"),
    path("projects/<slug:project_slug>/sessions/<int:session_id>/graph/ghosts/", views.SessionGhostsApi.as_view(),
         name="api-graph-ghosts"),
    path("projects/<slug:project_slug>/sessions/<int:session_id>/changes/", views.SessionChangesApi.as_view(),
         name="api-changes"),
    path("projects/<slug:project_slug>/recall/", views.RecallApi.as_view(), name="api-recall"),
    path("projects/<slug:project_slug>/memories/", memories.MemoryListApi.as_view(), name="api-memories"),
    path("projects/<slug:project_slug>/memories/<int:memory_id>/risks/", memories.MemoryRisksApi.as_view(),
         name="api-memory-risks"),
    path("projects/<slug:project_slug>/memories/<int:memory_id>/forget/", views.MemoryForgetApi.as_view(),
         name="api-memory-forget"),
    path("projects/<slug:project_slug>/otlp/v1/traces", otlp.OtlpTracesApi.as_view(), name="api-otlp-traces"),
]

# Stored recalls read back (memory/api/recalls.py): replay, compare, re-run.
from . import recalls  # noqa: E402

urlpatterns += [
    path("projects/<slug:project_slug>/recalls/", recalls.RecallListApi.as_view(), name="api-recalls"),
    path("projects/<slug:project_slug>/recalls/<int:recall_id>/", recalls.RecallDetailApi.as_view(),
         name="api-recall-detail"),
    path("projects/<slug:project_slug>/recalls/<int:recall_id>/compare/<int:other_id>/",
         recalls.RecallCompareApi.as_view(), name="api-recall-compare"),
    path("projects/<slug:project_slug>/recalls/<int:recall_id>/rerun/", recalls.RecallRerunApi.as_view(),
         name="api-recall-rerun"),
]

# Maintenance (memory/api/maintenance.py): POST with {"dry_run": true} first to see the counts.
from . import maintenance  # noqa: E402

urlpatterns += [
    path("projects/<slug:project_slug>/maintenance/decay/", maintenance.DecayApi.as_view(), name="api-maint-decay"),
    path("projects/<slug:project_slug>/maintenance/merge/", maintenance.MergeApi.as_view(), name="api-maint-merge"),
    path("projects/<slug:project_slug>/maintenance/summarise/", maintenance.SummariseApi.as_view(),
         name="api-maint-summarise"),
    path("projects/<slug:project_slug>/maintenance/review/", maintenance.ReviewApi.as_view(), name="api-maint-review"),
    path("projects/<slug:project_slug>/maintenance/forget/", maintenance.ForgetApi.as_view(), name="api-maint-forget"),
]

# The key-value store behind LangGraph's BaseStore (memory/api/store.py): one POST per operation.
from . import store  # noqa: E402

urlpatterns += [
    path("projects/<slug:project_slug>/store/get/", store.StoreGetApi.as_view(), name="api-store-get"),
    path("projects/<slug:project_slug>/store/put/", store.StorePutApi.as_view(), name="api-store-put"),
    path("projects/<slug:project_slug>/store/delete/", store.StoreDeleteApi.as_view(), name="api-store-delete"),
    path("projects/<slug:project_slug>/store/search/", store.StoreSearchApi.as_view(), name="api-store-search"),
    path("projects/<slug:project_slug>/store/namespaces/", store.StoreNamespacesApi.as_view(),
         name="api-store-namespaces"),
]

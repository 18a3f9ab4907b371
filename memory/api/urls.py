from django.urls import path

from . import views

urlpatterns = [
    path("projects/<slug:project_slug>/sessions/", views.SessionListCreateApi.as_view(), name="api-sessions"),
    path("projects/<slug:project_slug>/sessions/<int:session_id>/interactions/",
         views.InteractionListAcceptApi.as_view(), name="api-interactions"),
    path("projects/<slug:project_slug>/sessions/<int:session_id>/interactions/<int:interaction_id>/",
         views.InteractionDetailApi.as_view(), name="api-interaction"),
    path("projects/<slug:project_slug>/sessions/<int:session_id>/graph/", views.SessionGraphApi.as_view(),
         name="api-graph"),
    path("projects/<slug:project_slug>/sessions/<int:session_id>/changes/", views.SessionChangesApi.as_view(),
         name="api-changes"),
    path("projects/<slug:project_slug>/recall/", views.RecallApi.as_view(), name="api-recall"),
]

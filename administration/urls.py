"""Administration API routes, mounted under /api/ (docs/administration.md)."""

from django.urls import path

from . import api, forget_api, transfer_api

urlpatterns = [
    path("projects/<slug:project_slug>/members/", api.MemberListAddApi.as_view(), name="api-members"),
    path("projects/<slug:project_slug>/engine-settings/", api.EngineSettingsApi.as_view(), name="api-engine-settings"),
    path("projects/<slug:project_slug>/accounts/", api.AccountCreateApi.as_view(), name="api-accounts"),
    path("projects/<slug:project_slug>/members/<int:user_id>/", api.MemberDetailApi.as_view(), name="api-member"),
    path("projects/<slug:project_slug>/tokens/", api.TokenListCreateApi.as_view(), name="api-tokens"),
    path("projects/<slug:project_slug>/tokens/<int:token_id>/", api.TokenRevokeApi.as_view(), name="api-token"),
    path("projects/<slug:project_slug>/export/", transfer_api.ExportApi.as_view(), name="api-export"),
    path("projects/<slug:project_slug>/forget/preview/", forget_api.ForgetPreviewApi.as_view(),
         name="api-forget-preview"),
    path("projects/<slug:project_slug>/forget/jobs/", forget_api.ForgetJobListApi.as_view(), name="api-forget-jobs"),
    path("projects/<slug:project_slug>/forget/jobs/<int:job_id>/", forget_api.ForgetJobApi.as_view(),
         name="api-forget-job"),
]

"""Top-level URL map: web pages, the agent API and its OpenAPI schema."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, reverse_lazy
from django.views.i18n import JavaScriptCatalog
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import monitoring
from .favicon import favicon

urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    path("healthz", monitoring.healthz, name="healthz"),
    path("readyz", monitoring.readyz, name="readyz"),
    path("metrics", monitoring.metrics, name="metrics"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # A new account's one-time link (administration.services.account_create): choose a password, then log in.
    path("welcome/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(
        template_name="registration/welcome.html", success_url=reverse_lazy("login")), name="account-welcome"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its init script from this URL (?script=) instead of inline: CSP script-src 'self'.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="api/swagger_ui.html"),
         name="api-docs"),
    path("api/", include("memory.api.urls")),
    path("api/", include("curation.urls")),
    path("api/", include("administration.urls")),
    path("", include("curation.page_urls")),
    path("", include("administration.page_urls")),
    path("", include("memory.web.urls")),
]

handler404 = "contextweaver_site.not_found.not_found"

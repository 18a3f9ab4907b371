"""The profile for running behind TLS: DJANGO_SETTINGS_MODULE=contextweaver_site.settings.production.

Refuses to start without an explicit SECRET_KEY and ALLOWED_HOSTS (base.py would fall back to a key generated
into var/ and to localhost), and with DEBUG on. Turns on HSTS, secure cookies and the HTTPS redirect.
docs/production.md describes the reverse proxy in front of it.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

from .env import env_bool, env_int, env_list

# Checked before base.py runs: it would otherwise write a generated key into var/ and carry on.
_secret_key = os.environ.get("SECRET_KEY", "")
if len(_secret_key) < 50 or len(set(_secret_key)) < 5 or _secret_key.startswith("django-insecure-"):
    raise ImproperlyConfigured(
        "contextweaver_site.settings.production needs SECRET_KEY in the environment: at least 50 random "
        "characters, e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'. Keep it the same across "
        "restarts and processes (sessions and password-reset links are signed with it)."
    )
if not env_list("ALLOWED_HOSTS", []):
    raise ImproperlyConfigured(
        "contextweaver_site.settings.production needs ALLOWED_HOSTS in the environment: the host names the site "
        "is served under, comma-separated (e.g. ALLOWED_HOSTS=memory.example.com)."
    )
if env_bool("DEBUG", False):
    raise ImproperlyConfigured("DEBUG must be off in contextweaver_site.settings.production (unset DEBUG).")

from .base import *  # noqa: E402,F403
from .base import ALLOWED_HOSTS, CONTENT_SECURITY_POLICY  # noqa: E402

DEBUG = False

# HTTPS only: redirect plain HTTP, and tell browsers (HSTS) to use HTTPS for a year without asking again.
# Turn the redirect off only when the proxy already redirects and Django never sees plain HTTP.
SECURE_SSL_REDIRECT = env_bool("CW_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("CW_HSTS_SECONDS", 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("CW_HSTS_INCLUDE_SUBDOMAINS", True)
# Preloading is a commitment for the whole domain (hstspreload.org), so it is opt-in.
SECURE_HSTS_PRELOAD = env_bool("CW_HSTS_PRELOAD", False)

# A TLS-terminating proxy talks plain HTTP to Django; only when it sets X-Forwarded-Proto (and strips the
# client's own) may Django believe that header. Without it request.is_secure() is False and the redirect loops.
if env_bool("CW_TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Cookies only over HTTPS.
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
LANGUAGE_COOKIE_SECURE = True


def _websocket_sources(hosts: list[str]) -> list[str]:
    """wss://<host> for each allowed host, for browsers whose CSP 'self' does not match websockets yet."""
    sources = []
    for host in hosts:
        if host == "*" or host.startswith("["):  # any host / IPv6 literals: no valid CSP host source
            continue
        if host.startswith("."):  # ".example.com" allows the domain and its subdomains
            sources += [f"wss://{host[1:]}", f"wss://*{host}"]
        else:
            sources.append(f"wss://{host}")
    return sources


CONTENT_SECURITY_POLICY = {
    **CONTENT_SECURITY_POLICY,
    "DIRECTIVES": {
        **CONTENT_SECURITY_POLICY["DIRECTIVES"],
        "connect-src": [*CONTENT_SECURITY_POLICY["DIRECTIVES"]["connect-src"], *_websocket_sources(ALLOWED_HOSTS)],
    },
}

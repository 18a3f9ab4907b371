"""Browser protections that hold in every profile (imported at the end of base.py).

The profile behind TLS (settings/production.py) adds HSTS, secure cookies and the HTTPS redirect.
docs/production.md says what each protection is for.
"""

from csp.constants import NONE, SELF

SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

# Content-Security-Policy (django-csp 4: csp.middleware.CSPMiddleware in MIDDLEWARE). Only our own origin's
# scripts and styles run: the templates carry no inline <script> (json_script's type="application/json" is data,
# not script), no on… handler attributes and no style="…" attributes, so neither 'unsafe-inline' nor
# 'unsafe-eval' is needed. Swagger UI uses drf-spectacular's split view (templates/api/swagger_ui.html).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        # data: for Swagger UI's icons.
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        # CSP 3 lets 'self' match ws:/wss: on the page's own host and port (Chromium, Firefox, Safari 15.4+),
        # which covers the session page's websocket; production.py adds wss://<host> for older browsers.
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}

# WhiteNoise adds `Access-Control-Allow-Origin: *` to every static file by default (for fonts served from a
# CDN); ours are only loaded by our own pages, so other origins get no CORS read access.
WHITENOISE_ALLOW_ALL_ORIGINS = False

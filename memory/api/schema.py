"""What drf-spectacular cannot infer, so the OpenAPI schema says what the API really does.

- The bearer-token scheme of ProjectTokenAuthentication (without it Swagger's Authorize offered only
  the session cookie, and generated clients sent no token).
- The error answers every operation can give, in the API's one error shape (contextweaver_site/http/errors.py); views
  declare only what is particular to them (e.g. 409, or a 503 with its own meaning).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension

ERROR_COMPONENT = "Error"
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "description": "Machine-readable, e.g. invalid, not_found, throttled."},
                "message": {"type": "string", "description": "For people: what went wrong and what to do."},
                "fields": {"type": "object", "additionalProperties": True,
                           "description": "400 only: the problems per field (lists of messages, nested for "
                                          "batches)."},
                "detail": {"type": "object", "additionalProperties": True,
                           "description": "Structured detail, e.g. the stored interaction of a 409."},
            },
        },
    },
}
# Status → description, for every operation (400 and 413 only where a body or parameters are read).
COMMON_ERRORS = {
    "401": "No credentials, or an invalid or revoked token (`WWW-Authenticate: Bearer`).",
    "403": "Authenticated and in the project, but not allowed: a role too low, or a token on a people-only act.",
    "404": "No such project (or not yours: another project's token, not a member), session or object in it.",
    "429": "Over a rate limit (per token, per person, or failed token checks per address); see `Retry-After`.",
    "503": "The database is unavailable (restarting, out of connections). A write is stored whole or not at "
           "all: retry the same request with the same idempotency key after `Retry-After` seconds.",
}
INPUT_ERRORS = {
    "400": "Invalid input: the fields and why, in `error.fields`; nothing was written.",
    "413": "The body is over MAX_REQUEST_BODY_BYTES (10 MB by default).",
}


class ProjectTokenScheme(OpenApiAuthenticationExtension):
    target_class = "memory.api.authentication.ProjectTokenAuthentication"
    name = "projectToken"

    def get_security_definition(self, auto_schema) -> dict[str, Any]:
        return {"type": "http", "scheme": "bearer", "bearerFormat": "cw_…",
                "description": "A per-project agent token: `Authorization: Bearer cw_…` (manage.py create_project "
                               "prints one)."}


def add_error_responses(result: dict, generator, request, public) -> dict:
    """drf-spectacular postprocessing hook: the Error component and the error answers of every operation."""
    result.setdefault("components", {}).setdefault("schemas", {})[ERROR_COMPONENT] = ERROR_SCHEMA
    reference = {"application/json": {"schema": {"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}}}
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/projects/"):
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            reads_input = "requestBody" in operation or operation.get("parameters")
            errors = {**COMMON_ERRORS, **(INPUT_ERRORS if reads_input else {})}
            for code, description in errors.items():
                responses.setdefault(code, {"description": description})
            for code, response in responses.items():
                if code[0] in "45" and "content" not in response:
                    response["content"] = reference
    return result

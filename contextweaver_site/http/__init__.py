"""HTTP helpers the three apps (memory, curation, administration) share, so none imports another's API:

    access.py      the access rule (memory/access.py) for API requests: its refusals as 404 and 403
    pages.py       the same for server-rendered pages
    pagination.py  bounded limit/offset pagination and the page schema
    validation.py  checked serializer data (400 with field errors), object ids
    parsers.py     JSON the database can store (no lone surrogates, NUL, deep nesting)
    errors.py      one error shape for every API answer ({"error": {"code", "message", "detail"}})
"""

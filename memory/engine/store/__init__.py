"""The key-value store behind LangGraph's BaseStore (docs/integrations.md): items.py writes and reads one
item, query.py searches and lists namespaces, paths.py reads index paths and value filters."""

from .items import PutResult, item_delete, item_get, item_put
from .query import Found, items_search, namespaces_list

__all__ = ["Found", "PutResult", "item_delete", "item_get", "item_put", "items_search", "namespaces_list"]

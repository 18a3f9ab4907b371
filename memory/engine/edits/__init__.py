"""People's edits of the graph, written by the engine: the one place outside the write path that saves
memories, edges and entities. Curation (curation/services.py, curation/entities.py) decides what a
person may do and records the act; these functions make the change and its change-log rows, inside the
caller's transaction, and return those rows for the act to keep.

- memories.py: sensitive / status / kind, a mark reaching the summaries made from the memory
- edges.py:    approve, reject, relabel, draw, delete, and their undos
- entities.py: rename, merge, split, dismiss a flag, and their undos
"""

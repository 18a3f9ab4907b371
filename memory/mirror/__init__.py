"""The optional graph mirror: memories, entities, sessions and edges copied into a Cypher graph
(Neo4j, or FalkorDB) from the change log, for people who explore graphs in Neo4j Browser or Bloom.

PostgreSQL stays the system of record; the mirror is rebuilt from it at any time. targets.py talks to
the graph engines, cypher.py holds the statements (one dialect for both), sync.py decides what to write.
"""

"""The mirror's Cypher, in the dialect Neo4j and FalkorDB share.

Nodes: (:Memory), (:Entity), (:Session), each with the PostgreSQL `id` and `project_id`. Relationships:
(:Memory)-[:IN_SESSION]->(:Session), (:Memory)-[:MENTIONS {surface}]->(:Entity), and one typed
relationship per dependency edge, e.g. (:Memory)-[:CAUSAL {id, weight, confidence, status, …}]->(:Memory).
Every write is a MERGE by id (or a delete by id), so applying a change twice changes nothing.
"""

from __future__ import annotations

from ..models import Relation

INDEXED = (("Memory", "id"), ("Memory", "project_id"), ("Entity", "id"), ("Entity", "project_id"),
           ("Session", "id"), ("Session", "project_id"))
LABELS = ("Memory", "Entity", "Session")
# Relationship types cannot be parameters: each is spelled from the closed list of relations.
EDGE_TYPES = {relation.value: relation.value.upper() for relation in Relation}

UPSERT_SESSIONS = "UNWIND $rows AS r MERGE (s:Session {id: r.id}) SET s += r.props"
UPSERT_MEMORIES = ("UNWIND $rows AS r MERGE (m:Memory {id: r.id}) SET m += r.props "
                   "MERGE (s:Session {id: r.session_id}) ON CREATE SET s.project_id = r.props.project_id "
                   "MERGE (m)-[:IN_SESSION]->(s)")
UPSERT_ENTITIES = "UNWIND $rows AS r MERGE (e:Entity {id: r.id}) SET e += r.props"
CLEAR_MEMORY_MENTIONS = "UNWIND $ids AS id MATCH (:Memory {id: id})-[x:MENTIONS]->() DELETE x"
CLEAR_ENTITY_MENTIONS = "UNWIND $ids AS id MATCH ()-[x:MENTIONS]->(:Entity {id: id}) DELETE x"
LINK_MENTIONS = ("UNWIND $rows AS r MATCH (m:Memory {id: r.memory}), (e:Entity {id: r.entity}) "
                 "MERGE (m)-[x:MENTIONS]->(e) SET x.surface = r.surface")
DELETE_EDGES = "UNWIND $rows AS r MATCH (:Memory {id: r.source})-[e {id: r.id}]->(:Memory {id: r.target}) DELETE e"
# An entity no visible memory mentions any more (forgotten, marked sensitive, merged away) leaves the mirror.
SWEEP_ENTITIES = "MATCH (e:Entity {project_id: $project}) WHERE NOT (e)<-[:MENTIONS]-() DELETE e"
COUNT_NODES = "MATCH (n:{label} {{project_id: $project}}) RETURN count(n)"
WIPE_BATCH = "MATCH (n:{label} {{project_id: $project}}) WITH n LIMIT $limit DETACH DELETE n RETURN count(*)"


def delete_nodes(label: str) -> str:
    return f"UNWIND $ids AS id MATCH (n:{label} {{id: id}}) DETACH DELETE n"


def upsert_edges(relation: str) -> str:
    kind = EDGE_TYPES[relation]  # KeyError for anything not a relation: never formatted into Cypher
    return (f"UNWIND $rows AS r MATCH (a:Memory {{id: r.source}}), (b:Memory {{id: r.target}}) "
            f"MERGE (a)-[e:{kind} {{id: r.id}}]->(b) SET e += r.props")

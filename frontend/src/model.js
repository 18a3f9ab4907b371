// The session's graph as the browser knows it: memories, edges, interactions, and the change log
// cursor. Changes are applied once each (dedup by change id), in id order within a delivery, and a
// row's snapshot never goes back to an older version. apply() returns a Patch the views draw.

const REMOVED_STATUSES = new Set(["forgotten"]);
const MASK = "[sensitive]"; // what stands in for a sensitive memory's text when the reader may not see it

export function memoryFrom(row) {
  const dimensions = row.dimensions || {};
  const entityNames = Array.isArray(row.entities)
    ? row.entities.map((e) => (typeof e === "string" ? e : e.name)).filter(Boolean)
    : (dimensions.entities || []).map((e) => (typeof e === "string" ? e : e.name)).filter(Boolean);
  return {
    id: row.id,
    kind: row.kind || "fact",
    content: row.content ?? row.label ?? "",
    label: row.label || null,
    importance: Number(row.importance ?? 3),
    relevance: row.relevance ?? null,
    novelty: row.novelty ?? null,
    status: row.status || "active",
    sensitive: Boolean(row.sensitive),
    // How much a change to something it depends on may have made it out of date: 0 none, 1 a direct dependent of
    // the changed memory, halved per further hop (engine/risk.py). Changes "memory.at_risk" and "memory.updated"
    // (a person settled it) carry it in their snapshots.
    atRisk: Math.max(0, Math.min(1, Number(row.at_risk) || 0)),
    accessCount: row.access_count ?? null,
    occurredAt: row.occurred_at || row.created_at || null,
    time: Date.parse(row.occurred_at || row.created_at || "") || 0,
    dimensions,
    entities: [...new Set(entityNames)],
    intent: row.intent ?? dimensions.intent ?? "",
    sources: Array.isArray(row.sources) ? row.sources : null,
    position: validPosition(row.position),
  };
}

function validPosition(position) {
  if (!position || typeof position !== "object") return null;
  const x = Number(position.x);
  const y = Number(position.y);
  return Number.isFinite(x) && Number.isFinite(y) ? { x, y } : null;
}

/** At risk, as the page shows it: flagged, and still in use (a superseded or archived memory is out of use
 *  already; its flag says nothing more). */
export function isAtRisk(memory) {
  return Boolean(memory) && memory.atRisk > 0 && memory.status === "active";
}

// Where an edge came from: known (a person drew it, the agent declared it, or it was learned from what the agent
// used after a recall) or guessed (the engine's rules or an LLM). memory.models.KNOWN_ORIGINS.
export const KNOWN_ORIGINS = new Set(["human", "agent", "use"]);

export function isKnownOrigin(origin) {
  return KNOWN_ORIGINS.has(origin);
}

export function edgeFrom(row) {
  return {
    id: row.id,
    source: row.source_id ?? row.source,
    target: row.target_id ?? row.target,
    relation: row.relation,
    weight: Number(row.weight ?? 1),
    confidence: Number(row.confidence ?? 1),
    origin: row.origin || "rule",
    status: row.status || "inferred",
    needsReview: Boolean(row.needs_review),
    rationale: row.rationale || "",
    createdAt: row.created_at || null,
  };
}

/** A memory of another session at the far end of an edge (the graph API's `ghosts`): drawn faded, never one of
 *  this session's memories (not in `memories`, not filtered, counted or listed). */
export function ghostFrom(row) {
  return {
    id: row.id,
    sessionId: row.session_id,
    sessionTitle: row.session_title || "",
    kind: row.kind || "fact",
    status: row.status || "active",
    sensitive: Boolean(row.sensitive),
    content: row.content ?? row.label ?? "",
    label: row.label || null,
    occurredAt: row.occurred_at || null,
  };
}

export function interactionFrom(row) {
  return {
    id: row.id,
    kind: row.kind,
    content: row.content ?? "",
    status: row.status,
    scores: row.scores || {},
    reason: row.reason || "",
    occurredAt: row.occurred_at || null,
    time: Date.parse(row.occurred_at || "") || 0,
  };
}

function emptyPatch() {
  return {
    memories: { added: [], updated: [], removed: [] },
    edges: { added: [], updated: [], removed: [] },
    ghosts: { added: [], updated: [], removed: [] },
    interactions: [],
    recalls: [],
    changes: [],
  };
}

export class GraphModel {
  constructor(graph, interactions = []) {
    this.memories = new Map();
    this.edges = new Map();
    this.ghosts = new Map(); // other sessions' memories the edges reach, by id
    this.sessionId = graph.session ? graph.session.id : null;
    this.interactions = new Map();
    this.entities = (graph.entities || []).map((e) => ({ id: e.id, name: e.name, type: e.type, aliases: e.aliases || [] }));
    this.listeners = new Set();
    this.truncated = Boolean(graph.truncated);
    this.totalMemories = Number(graph.total_memories ?? (graph.memories || graph.nodes || []).length);
    this.around = graph.around ?? null;
    this.lastChangeId = Number(graph.last_change_id || 0);
    this.seen = new Set();
    this.versions = new Map(); // "memory:12" -> id of the change whose snapshot we hold
    this.appliedCount = 0;
    this.duplicateCount = 0;
    this.history = [];  // changes received live or loaded for the panel, by id
    for (const row of graph.memories || graph.nodes || []) this.memories.set(row.id, memoryFrom(row));
    for (const row of graph.edges || []) this.edges.set(row.id, edgeFrom(row));
    for (const row of graph.ghosts || []) this.ghosts.set(row.id, ghostFrom(row));
    for (const row of interactions) this.interactions.set(row.id, interactionFrom(row));
    if (this.hasServerPositions) this._spreadPositions();
  }

  /** Server layouts are in abstract units: scale them so that a typical edge leaves room for labels. */
  _spreadPositions() {
    const lengths = [];
    for (const edge of this.edges.values()) {
      const a = this.memories.get(edge.source);
      const b = this.memories.get(edge.target);
      if (a && b) lengths.push(Math.hypot(a.position.x - b.position.x, a.position.y - b.position.y));
    }
    if (!lengths.length) return;
    lengths.sort((x, y) => x - y);
    const median = lengths[Math.floor(lengths.length / 2)];
    const target = this.memories.size <= 300 ? 120 : 90;
    if (!(median > 0) || median >= target) return;
    const factor = target / median;
    for (const memory of this.memories.values()) {
      memory.position = { x: memory.position.x * factor, y: memory.position.y * factor };
    }
  }

  get hasServerPositions() {
    if (this.memories.size === 0) return false;
    for (const memory of this.memories.values()) if (!memory.position) return false;
    return true;
  }

  /** Apply a delivery of changes; duplicates (already seen ids) are skipped. */
  /** Call `listener(patch)` after every applied batch of changes (see `notify`); returns an unsubscribe. */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tell the subscribed panels and tables about a patch, once the graph view has drawn it. */
  notify(patch) {
    for (const listener of this.listeners) listener(patch);
  }

  apply(changes) {
    const patch = emptyPatch();
    const fresh = [];
    for (const change of changes) {
      if (this.seen.has(change.id)) {
        this.duplicateCount += 1;
        continue;
      }
      this.seen.add(change.id);
      fresh.push(change);
    }
    fresh.sort((a, b) => a.id - b.id);
    for (const change of fresh) {
      this._applyOne(change, patch);
      this.lastChangeId = Math.max(this.lastChangeId, change.id);
      this.appliedCount += 1;
      patch.changes.push(change);
    }
    this._linkSources(fresh);
    if (patch.edges.removed.length || patch.memories.removed.length) this._pruneGhosts(patch);
    this.history.push(...fresh);
    return patch;
  }

  /** The far ends of edges that join a memory of this page to one it holds neither as a memory nor as a ghost:
   *  memories of other sessions to read as ghosts (`addGhosts`), so those edges can be drawn. */
  missingEnds() {
    const missing = new Set();
    for (const edge of this.edges.values()) {
      const [a, b] = [edge.source, edge.target];
      if (this.memories.has(a) && !this.memories.has(b) && !this.ghosts.has(b)) missing.add(b);
      if (this.memories.has(b) && !this.memories.has(a) && !this.ghosts.has(a)) missing.add(a);
    }
    return [...missing];
  }

  /** Ghost rows read for `missingEnds`: a patch drawing them and the edges that were waiting for them. */
  addGhosts(rows) {
    const patch = emptyPatch();
    for (const row of rows) {
      if (this.memories.has(row.id) || this.ghosts.has(row.id)) continue;
      const ghost = ghostFrom(row);
      this.ghosts.set(ghost.id, ghost);
      patch.ghosts.added.push(ghost);
    }
    const added = new Set(patch.ghosts.added.map((g) => g.id));
    if (added.size) {
      for (const edge of this.edges.values()) {
        if (added.has(edge.source) || added.has(edge.target)) patch.edges.added.push(edge);
      }
    }
    return patch;
  }

  /** Is this memory id drawn on the page: one of the session's memories, or a ghost? */
  holds(memoryId) {
    return this.memories.has(memoryId) || this.ghosts.has(memoryId);
  }

  /** Ghosts no edge reaches any more go (their edge was deleted, or the memory here was forgotten). */
  _pruneGhosts(patch) {
    if (!this.ghosts.size) return;
    const reached = new Set();
    for (const edge of this.edges.values()) {
      reached.add(edge.source);
      reached.add(edge.target);
    }
    for (const id of [...this.ghosts.keys()]) {
      if (reached.has(id)) continue;
      this.ghosts.delete(id);
      patch.ghosts.removed.push(id);
    }
  }

  /** Mark changes as known without applying them (the graph snapshot already contains them). */
  markSeen(ids) {
    for (const id of ids) this.seen.add(id);
  }

  _isStale(change) {
    const key = `${change.object_type}:${change.object_id}`;
    const held = this.versions.get(key) || 0;
    if (change.id < held) return true;
    this.versions.set(key, change.id);
    return false;
  }

  _applyOne(change, patch) {
    const type = change.object_type;
    if (type === "memory") this._applyMemory(change, patch);
    else if (type === "edge") this._applyEdge(change, patch);
    else if (type === "interaction") this._applyInteraction(change, patch);
    else if (type === "recall" && change.after) patch.recalls.push(change.after);
    else if (type === "entity" && change.after) this._applyEntity(change, patch);
  }

  /** A person renamed, merged or split an entity (a project-wide change): the names on memories follow. */
  _applyEntity(change, patch) {
    const { before, after } = change;
    if (after.name === "[sensitive]") return; // the reader may not see this entity
    const renames = new Map();
    if (change.op === "entity.merged") for (const alias of after.aliases || []) renames.set(alias, after.name);
    if (before && before.name && before.name !== after.name) renames.set(before.name, after.name);
    const known = this.entities.find((e) => e.id === after.id);
    this.entities = this.entities.filter((e) => e.id === after.id || !renames.has(e.name));
    if (known) Object.assign(known, { name: after.name, type: after.type, aliases: after.aliases || [] });
    else this.entities.push({ id: after.id, name: after.name, type: after.type, aliases: after.aliases || [] });
    const touched = new Set();
    for (const memory of this.memories.values()) {
      if (!memory.entities.some((n) => renames.has(n))) continue;
      memory.entities = [...new Set(memory.entities.map((n) => renames.get(n) || n))];
      touched.add(memory.id);
    }
    // A split: the memories that wrote the alias now mention the new entity instead of the old one.
    const parent = (after.evidence || []).map((e) => e.split_from).find(Boolean);
    const parentName = parent && (this.entities.find((e) => e.id === parent) || {}).name;
    for (const [memoryId] of after.mentions || []) {
      const memory = this.memories.get(memoryId);
      if (!memory) continue;
      memory.entities = [...new Set([...memory.entities.filter((n) => n !== parentName), after.name])];
      touched.add(memoryId);
    }
    for (const id of touched) patch.memories.updated.push(this.memories.get(id));
  }

  _applyMemory(change, patch) {
    if (this._isStale(change)) return;
    const id = change.object_id;
    const after = change.after;
    if (this.sessionId !== null && change.session_id && change.session_id !== this.sessionId) {
      this._applyGhost(change, patch); // another session's memory: at most a ghost here
      return;
    }
    if (!after || REMOVED_STATUSES.has(after.status) || change.op.endsWith(".deleted")) {
      if (this.memories.delete(id)) {
        this.totalMemories = Math.max(0, this.totalMemories - 1);
        patch.memories.removed.push(id);
        for (const [edgeId, edge] of this.edges) {
          if (edge.source === id || edge.target === id) this.edges.delete(edgeId);
        }
      }
      return;
    }
    const previous = this.memories.get(id);
    const memory = memoryFrom({ ...after, id });
    if (previous) {
      // Snapshots carry no provenance, position or resolved entities: keep what we had. A masked snapshot (the
      // memory was marked sensitive) names no entities, and the page shows none, as the graph endpoint would.
      // Unmarked, the viewer gets the whole snapshot again (memory/visibility.py): text, dimensions, entities.
      memory.sources = memory.sources || previous.sources;
      memory.position = memory.position || previous.position;
      if (!memory.entities.length && memory.content !== MASK) memory.entities = previous.entities;
      this.memories.set(id, memory);
      patch.memories.updated.push(memory);
    } else {
      this.memories.set(id, memory);
      this.totalMemories += 1;
      patch.memories.added.push(memory);
    }
  }

  /** A change of another session's memory: a ghost shown here follows it (its status, its text, masked or not);
   *  forgotten or deleted, it goes with its edges. Never one of this session's memories. */
  _applyGhost(change, patch) {
    const id = change.object_id;
    const ghost = this.ghosts.get(id);
    if (!ghost) return;
    const after = change.after;
    if (!after || REMOVED_STATUSES.has(after.status) || change.op.endsWith(".deleted")) {
      this.ghosts.delete(id);
      patch.ghosts.removed.push(id);
      for (const [edgeId, edge] of this.edges) {
        if (edge.source === id || edge.target === id) {
          this.edges.delete(edgeId);
          patch.edges.removed.push(edgeId);
        }
      }
      return;
    }
    const updated = { ...ghost, kind: after.kind || ghost.kind, status: after.status || ghost.status,
      sensitive: Boolean(after.sensitive), content: after.content ?? ghost.content, label: null };
    this.ghosts.set(id, updated);
    patch.ghosts.updated.push(updated);
  }

  _applyEdge(change, patch) {
    if (this._isStale(change)) return;
    const id = change.object_id;
    const after = change.after;
    if (!after || change.op.endsWith(".deleted")) {
      if (this.edges.delete(id)) patch.edges.removed.push(id);
      return;
    }
    const edge = edgeFrom({ ...after, id });
    const known = this.edges.has(id);
    this.edges.set(id, edge);
    (known ? patch.edges.updated : patch.edges.added).push(edge);
  }

  _applyInteraction(change, patch) {
    if (!change.after || this._isStale(change)) return;
    const interaction = interactionFrom({ ...change.after, id: change.object_id });
    this.interactions.set(interaction.id, interaction);
    patch.interactions.push(interaction);
  }

  /** A memory made in the same delivery as its interaction's "kept" change came from it. */
  _linkSources(changes) {
    const kept = changes.filter((c) => c.object_type === "interaction" && c.after && c.after.status === "kept");
    if (!kept.length) return;
    for (const change of changes) {
      if (change.op !== "memory.created") continue;
      const memory = this.memories.get(change.object_id);
      if (!memory || memory.sources) continue;
      const source = kept.find((k) => k.after.content === memory.content) || (kept.length === 1 ? kept[0] : null);
      if (source) {
        memory.sources = [{ interaction_id: source.object_id, kind: source.after.kind,
          occurred_at: source.after.occurred_at, metadata: source.after.metadata || {} }];
      }
    }
  }

  edgesOf(memoryId) {
    const result = [];
    for (const edge of this.edges.values()) if (edge.source === memoryId || edge.target === memoryId) result.push(edge);
    return result;
  }

  timeRange() {
    let min = Infinity;
    let max = -Infinity;
    for (const memory of this.memories.values()) {
      if (!memory.time) continue;
      if (memory.time < min) min = memory.time;
      if (memory.time > max) max = memory.time;
    }
    return Number.isFinite(min) ? { min, max } : { min: 0, max: 0 };
  }
}

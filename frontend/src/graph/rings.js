// The neighbourhood view's layout (?around=<id>, issue 15): the memory in the centre and the memories linked
// to it in rings by hop distance. A force layout drew a dense neighbourhood (~120 memories, ~550 edges, most
// of them shared entities) as one crowded cloud. Here a ring too full for its memories widens into a band of
// staggered sub-rings, and each ring is ordered by the angles of the memories it is linked to (barycentres,
// swept out and back; a claimed dependency weighs more than adjacency or a shared entity, as it is drawn
// more strongly), so most links run outwards or to a near neighbour instead of across the drawing.

const SPACING = 66; // model units between memories on one sub-ring (the largest node is 42 wide)
const BAND_GAP = 60; // between the sub-rings of one band: staggered neighbours on two sub-rings stay about SPACING apart
const RING_GAP = 200; // between one hop's ring (or band) and the next: an empty moat, so the rings read as rings
const FIRST_RING = 150;
const MAX_BAND = 3;
const TOP = -Math.PI / 2;

const SWEEPS = 5;

/** Hop distance of every memory from `focus` over `links` ([a, b, weight]); unreached ones one hop past the
 *  rest. Also each memory's linked memories ({id, weight}). */
export function hopLevels(ids, links, focus) {
  const near = new Map(ids.map((id) => [id, []]));
  for (const [a, b, weight = 1] of links) {
    if (near.has(a) && near.has(b) && a !== b) {
      near.get(a).push({ id: b, weight });
      near.get(b).push({ id: a, weight });
    }
  }
  const level = new Map([[focus, 0]]);
  let frontier = [focus];
  while (frontier.length) {
    const next = [];
    for (const id of frontier) {
      for (const { id: other } of near.get(id) || []) {
        if (!level.has(other)) {
          level.set(other, level.get(id) + 1);
          next.push(other);
        }
      }
    }
    frontier = next;
  }
  const beyond = Math.max(0, ...level.values()) + 1;
  for (const id of ids) if (!level.has(id)) level.set(id, beyond);
  return { level, near };
}

/** The mean direction of weighted angles ([angle, weight]); null for none. */
function circularMean(weighted) {
  if (!weighted.length) return null;
  let x = 0;
  let y = 0;
  for (const [a, w] of weighted) {
    x += w * Math.cos(a);
    y += w * Math.sin(a);
  }
  return Math.hypot(x, y) < 1e-9 ? weighted[0][0] : Math.atan2(y, x);
}

const wrap = (a) => ((a % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI);

/** Spread a ring's memories evenly over `slots` in `order` (a band's slots are a multiple of its sub-rings, so
 *  the stagger holds across the wrap), turned to where their barycentres point on average. */
function spread(order, bary, angle, slots) {
  const step = (2 * Math.PI) / slots;
  const offsets = [];
  order.forEach((id, i) => {
    if (bary.get(id) !== null) offsets.push([bary.get(id) - i * step, 1]);
  });
  const base = circularMean(offsets) ?? TOP;
  order.forEach((id, i) => angle.set(id, base + i * step));
}

/** Order ring `k` by the weighted mean angle of each memory's linked memories on ring `towards` and on its own
 *  ring (once placed); ties and loners by time. */
function orderRing(ring, k, towards, near, level, angle, time) {
  const bary = new Map();
  for (const id of ring) {
    const linked = near.get(id).filter((o) => (level.get(o.id) === towards || level.get(o.id) === k)
      && o.id !== id && angle.has(o.id));
    bary.set(id, circularMean(linked.map((o) => [angle.get(o.id), o.weight])));
  }
  const key = (id) => (bary.get(id) === null ? Infinity : wrap(bary.get(id) - TOP));
  const order = [...ring].sort((a, b) => key(a) - key(b) || time(a) - time(b) || a - b);
  return { order, bary };
}

/** The sub-ring count and inner radius that keep `n` memories SPACING apart in the smallest band. */
function band(n, inner) {
  let best = null;
  for (let rings = 1; rings <= MAX_BAND; rings += 1) {
    const radius = Math.max(inner, (Math.ceil(n / rings) * SPACING) / (2 * Math.PI));
    const outer = radius + (rings - 1) * BAND_GAP;
    if (!best || outer < best.outer - 1) best = { rings, radius, outer };
  }
  return best;
}

/**
 * Positions (memory id → {x, y}) of `ids` in rings around `focus`, centred on (0, 0).
 * @param {number[]} ids memories to place
 * @param {Array<[number, number, number]>} links edges between them, with a weight (direction does not matter)
 * @param {number} focus the memory in the centre
 * @param {(id: number) => number} time for a stable order among equals
 */
export function ringPositions(ids, links, focus, time = () => 0) {
  const { level, near } = hopLevels(ids, links, focus);
  const rings = [];
  for (const id of ids) {
    const k = level.get(id);
    (rings[k] ||= []).push(id);
  }
  const last = rings.length - 1;
  const bands = [];
  let outer = 0;
  for (let k = 1; k <= last; k += 1) {
    if (!rings[k] || !rings[k].length) continue;
    bands[k] = band(rings[k].length, k === 1 ? FIRST_RING : outer + RING_GAP);
    outer = bands[k].outer;
  }
  const angle = new Map([[focus, TOP]]);
  // Out (each ring by the ring inside it), back (by the ring outside), and so on, ending outwards.
  const place = (k, towards) => {
    if (!rings[k] || !rings[k].length) return;
    const { order, bary } = orderRing(rings[k], k, towards, near, level, angle, time);
    rings[k] = order;
    spread(order, bary, angle, Math.ceil(order.length / bands[k].rings) * bands[k].rings);
  };
  for (let k = 1; k <= last; k += 1) place(k, k - 1);
  for (let pass = 1; pass < SWEEPS; pass += 1) {
    if (pass % 2) for (let k = last - 1; k >= 1; k -= 1) place(k, k + 1);
    else for (let k = 2; k <= last; k += 1) place(k, k - 1);
  }
  const positions = new Map([[focus, { x: 0, y: 0 }]]);
  for (let k = 1; k <= last; k += 1) {
    if (!rings[k] || !rings[k].length) continue;
    const { rings: count, radius } = bands[k];
    // Staggered: neighbours in the order alternate between the sub-rings, so each sub-ring keeps SPACING.
    rings[k].forEach((id, i) => {
      const r = radius + (i % count) * BAND_GAP;
      positions.set(id, { x: r * Math.cos(angle.get(id)), y: r * Math.sin(angle.get(id)) });
    });
  }
  return positions;
}

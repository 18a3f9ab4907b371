// Translated display names of the engine's enum values, sent by the server in the page config.

export function makeLabels(choices) {
  const lookup = (list) => {
    const map = new Map((list || []).map((c) => [c.value, c.label]));
    return (value) => map.get(value) || (value ? String(value).replace(/_/g, " ") : "");
  };
  return {
    kind: lookup(choices.kinds),
    status: lookup(choices.statuses),
    relation: lookup(choices.relations),
    origin: lookup(choices.origins),
    edgeStatus: lookup(choices.edgeStatuses),
    intent: lookup(choices.intents),
    interactionKind: lookup(choices.interactionKinds),
    interactionStatus: lookup(choices.interactionStatuses),
    dimension: lookup(choices.dimensions),
    entityType: lookup(choices.entityTypes),
    sentiment: lookup(choices.sentiments),
    stage: lookup(choices.stages),
  };
}

// Why the selective filter kept or dropped an interaction, in the reader's language. The server keeps
// the decision as a code with its values (scores.verdict, memory/engine/scoring.py) beside its English
// `reason`; a reason without a code (an LLM judge's own words) is shown as written.

import { formatNumber, gettext, interpolate } from "./i18n.js";

export function filterReason(interaction, labels) {
  const v = (interaction.scores || {}).verdict;
  const text = v ? coded(v, labels) : null;
  if (!text) return interaction.reason || "";
  return v.llm_unavailable ? `${text} ${gettext("(the LLM judge was unavailable)")}` : text;
}

function coded(v, labels) {
  const values = {
    total: formatNumber(v.total, 2), threshold: formatNumber(v.threshold, 2),
    similarity: formatNumber(v.similarity, 2), memory: v.memory, kind: labels.kind(v.kind),
  };
  const say = (template) => interpolate(template, values, true);
  const dropped = () => say(gettext("dropped: total %(total)s (< %(threshold)s) as %(kind)s"));
  switch (v.code) {
    case "chit_chat": return gettext("chit-chat with no information");
    case "too_short": return gettext("too short to carry information");
    case "duplicate": return say(gettext("repeats memory #%(memory)s"));
    case "off_task": return say(gettext("off-task (similarity %(similarity)s to the task focus)"));
    case "dropped": return dropped();
    case "kept": return say(gettext("kept: total %(total)s (≥ %(threshold)s) as %(kind)s"));
    case "kept_without_focus": // what the rules said (absent when an LLM judged), then why it was kept anyway
      return (v.total === undefined ? "" : `${dropped()}; `)
        + gettext("kept: the session has no task focus, so only chit-chat and duplicates are dropped");
    default: return null;
  }
}

"""The one read layer that masks: every read that leaves the server goes through a function here, which
takes its reader (memory/reads/reader.py: a person's or token's Access, the graph mirror, an LLM prompt)
and returns rows already masked by the visibility rule (memory/visibility.py). Views, consumers and the
export pick a read and send its rows; they never mask by hand and never serialize a model that carries
content.

    rows.py      memories, graph nodes, ghosts, edges, interactions (the builders every exit shares)
    graph.py     a session's graph and its ghosts              (API, session page, SDK, MCP)
    changes.py   the change log                                (API, websocket live and catch-up)
    recall.py    a recall's answer                             (API, SDK, MCP)
    store.py     store items                                   (API, LangGraph store)
    review.py    the review queue's edges                      (curation API)
    export.py    a project's export rows                       (JSON Lines, GraphML)

Reads elsewhere that apply the same rule on their own terms: stored recalls (engine/recall/replay.py,
`show_sensitive` from the reader), the graph mirror (mirror/sync.py, as reads.reader.MIRROR) and LLM
prompts (engine/sensitivity.py, as reads.reader.LLM_PROMPT). tests/test_masking_every_exit.py reads every
exit as a viewer and an agent token.
"""

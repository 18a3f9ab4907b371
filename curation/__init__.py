"""Human curation of the memory graph (approve/relabel/reject edges, sensitive marks, forgetting).

Thin for now: curation services call into memory.engine so every act lands in the change log.
"""

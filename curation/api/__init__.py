"""The curation API: people (never agent tokens) review and correct the graph. Reads need a member,
writes the curator role; each view validates, calls one service or selector, and serializes. Session
logins need the CSRF token for every write (DRF's SessionAuthentication)."""

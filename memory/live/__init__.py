"""The live view's server side: viewer masking, local subscriptions and the PostgreSQL bridge.

See docs/live.md for the protocol and the cross-process design.
"""

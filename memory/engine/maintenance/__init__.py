"""Maintenance jobs (SPEC §5), one module each: decay, merge, summarise, review, forget.

Every job is a plain function taking a project (and filters), `dry_run` and a `progress(done, total)`
callback, writing each change to the change log in the change's transaction and returning a
JobReport (common.py). Commands (cli.py + management/commands) and the API (api/maintenance.py) call them.
"""

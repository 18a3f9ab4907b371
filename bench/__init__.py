"""Benchmarks (`make bench`): numbers go to docs/benchmarks.md with the machine and date."""

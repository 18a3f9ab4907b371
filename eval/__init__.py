"""Labelled evaluation of ContextWeaver: recall quality per preset and inferred-edge quality (`make eval`)."""

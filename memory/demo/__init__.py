"""Demo data: scripted agent sessions (travel and coding, English and Chinese) and their loader."""

from .scenarios import Scenario, ScenarioInteraction, load_scenarios

__all__ = ["Scenario", "ScenarioInteraction", "load_scenarios"]

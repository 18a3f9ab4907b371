"""The graph's palette (frontend/src/graph/style.js): every kind and relation has its own colour and its
own shape, and the colours stay apart for people with the common colour-vision deficiencies.

Colours are compared in CAM02-UCS (ΔE' about 1 is a just-noticeable difference on large patches; graph
nodes and thin lines need far more), after simulating full deuteranopia, protanopia and tritanopia
(Machado et al. 2009, as colorspacious implements it)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from colorspacious import cspace_convert, deltaE

from memory.models import MemoryKind, Relation

STYLE = Path(__file__).resolve().parent.parent / "frontend" / "src" / "graph" / "style.js"
VISIONS = {"normal vision": None, "deuteranopia": "deuteranomaly", "protanopia": "protanomaly",
           "tritanopia": "tritanomaly"}
# The least ΔE' between two kinds (or two relations): red-green deficiencies are common (about 1 man in
# 12), tritanopia is rare (about 1 in 10,000) and the shapes tell everything apart anyway.
MIN_DISTANCE = {"normal vision": 11, "deuteranopia": 11, "protanopia": 11, "tritanopia": 8}
WHITE = "#ffffff"


def js_object(name: str) -> dict[str, str]:
    """An `export const NAME = {key: "value", ...};` of style.js, read as data."""
    match = re.search(rf"export const {name} = \{{(.*?)\}};", STYLE.read_text(encoding="utf-8"), re.S)
    assert match, f"{name} not found in {STYLE}"
    return json.loads("{" + re.sub(r"(\w+):", r'"\1":', match.group(1)).rstrip().rstrip(",") + "}")


def js_string(name: str) -> str:
    match = re.search(rf'export const {name} = "(#[0-9a-f]{{6}})";', STYLE.read_text(encoding="utf-8"))
    assert match, f"{name} not found in {STYLE}"
    return match.group(1)


def rgb(color: str) -> np.ndarray:
    return np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)


def seen(color: str, vision: str | None) -> np.ndarray:
    if vision is None:
        return rgb(color)
    space = {"name": "sRGB1+CVD", "cvd_type": vision, "severity": 100}
    return np.clip(cspace_convert(rgb(color) / 255, space, "sRGB1"), 0, 1) * 255


def closest_pair(colors: dict[str, str], vision: str | None) -> tuple[float, str, str]:
    return min((float(deltaE(seen(a, vision), seen(b, vision), input_space="sRGB255")), x, y)
               for (x, a), (y, b) in itertools.combinations(colors.items(), 2))


def test_every_kind_and_relation_has_a_colour_and_a_shape_of_its_own():
    kinds, shapes = js_object("KIND_COLORS"), js_object("KIND_SHAPES")
    relations, arrows = js_object("RELATION_COLORS"), js_object("RELATION_ARROWS")
    assert set(kinds) == set(shapes) == set(MemoryKind.values)
    assert set(relations) == set(arrows) == set(Relation.values)
    for mapping in (kinds, shapes, relations, arrows):
        assert len(set(mapping.values())) == len(mapping), mapping


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("group", ["KIND_COLORS", "RELATION_COLORS"])
def test_colours_stay_apart_under_colour_vision_deficiencies(group, vision):
    distance, a, b = closest_pair(js_object(group), VISIONS[vision])
    assert distance >= MIN_DISTANCE[vision], f"{group}: {a} and {b} are {distance:.1f} apart for {vision}"


def test_the_old_clash_is_gone_and_colours_show_on_the_white_canvas():
    """A proposal is no longer an orange that a `supersedes` edge shares: it keeps its relation's colour on a
    pale halo. Kinds and dependency relations stand out from the white canvas (the structural greys and the pale
    speaker's thread are meant to recede)."""
    halo = js_string("PROPOSAL_HALO")
    relations = js_object("RELATION_COLORS")
    assert "PROPOSAL_COLOR" not in STYLE.read_text(encoding="utf-8")
    assert float(deltaE(rgb(halo), rgb(WHITE), input_space="sRGB255")) < 40  # pale: a halo, not a hue
    structural = ("shares_entity", "next_in_session", "next_by_speaker")
    dependencies = {k: v for k, v in relations.items() if k not in structural}
    for name, color in {**js_object("KIND_COLORS"), **dependencies}.items():
        assert float(deltaE(rgb(color), rgb(WHITE), input_space="sRGB255")) >= 25, name

"""The picture's colours are told apart by readers with a colour vision deficiency: the
distances render_svg's tables promise, measured under simulated deuteranopia,
protanopia and tritanopia (Machado, Oliveira and Fernandes 2009, severity 1) in CIELAB
(green running and pink crashed cells were 20 apart under deuteranopia: both olive)."""

from __future__ import annotations

import itertools
import math

from deployspec.svg_palette import STATE_COLOURS, STATUS_COLOURS

SIMULATIONS = {
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602), (0.004733, 0.691367, 0.303900)),
}


def _linear(colour: str) -> list[float]:
    channels = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]


def _lab(rgb: list[float]) -> tuple[float, float, float]:
    r, g, b = (min(1.0, max(0.0, c)) for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    f = lambda t: t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def seen(colour: str, simulation: str | None) -> tuple[float, float, float]:
    rgb = _linear(colour)
    if simulation is not None:
        rgb = [sum(m * c for m, c in zip(row, rgb)) for row in SIMULATIONS[simulation]]
    return _lab(rgb)


def closest(colours: list[str]) -> float:
    """The smallest distance between two of ``colours``, as any of the readers sees them."""
    return min(math.dist(seen(a, s), seen(b, s))
               for a, b in itertools.combinations(colours, 2) for s in (None, *SIMULATIONS))


def test_running_starting_and_crashed_are_told_apart_by_every_reader():
    assert closest([STATUS_COLOURS[s] for s in ("RUNNING", "STARTING", "CRASHED")]) >= 39
    assert closest([STATUS_COLOURS[s] for s in ("running", "starting", "crash_loop")]) >= 39


def test_deployment_states_are_told_apart_by_every_reader():
    assert closest(list(STATE_COLOURS.values())) >= 25


def test_the_old_palette_was_not():
    """What the test measures: green running and pink crashed, 20 apart under deuteranopia."""
    assert closest(["#2f9e44", "#d6336c"]) < 21

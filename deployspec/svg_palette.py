"""The colours of a trace's picture (``render_svg``): instance statuses and deployment
states told apart also under colour vision deficiencies, and the ink written on them."""

from __future__ import annotations

#: instance statuses. Told apart by readers with a colour vision deficiency too: at least
#: 39 CIELAB units between any two of running, starting and crashed under simulated
#: deuteranopia, protanopia and tritanopia (green for running and pink for crashed were 20
#: apart under deuteranopia, the same olive); a failing one is hatched as well
STATUS_COLOURS = {
    "RUNNING": "#1971c2",
    "STARTING": "#f0b429",
    "CRASHED": "#c92a2a",
    "DOWN": "#868e96",
    "running": "#1971c2",
    "starting": "#f0b429",
    "crash_loop": "#c92a2a",
    "empty": "#dee2e6",
}
#: the statuses drawn hatched: an instance that fails, whatever the colour says to its reader
FAILING = frozenset({"CRASHED", "crash_loop"})
#: deployment states, at least 25 CIELAB units apart, also under simulated colour vision
#: deficiencies (DEPLOYING and PREPAUSED were 3.4 apart under deuteranopia); their names
#: are written on the bands besides
STATE_COLOURS = {
    "DEPLOYING": "#748ffc",
    "PREPAUSED": "#862e9c",
    "PAUSED": "#a61e4d",
    "CANCELING": "#ffa94d",
    "CANCELED": "#ced4da",
    "DEPLOYED": "#8ce99a",
}
FALLBACK = ("#15aabf", "#82c91e", "#fab005", "#be4bdb", "#fd7e14", "#495057")
#: the settle phase's shading
SETTLE_FILL = "#e9ecef"
#: a refused step's action label
REJECTED_INK = "#868e96"
#: the hatching of a failing instance's cell (``FAILING``)
HATCH = ('<defs><pattern id="failing" width="5" height="5" patternUnits="userSpaceOnUse" '
         'patternTransform="rotate(45)"><rect width="2" height="5" fill="white" fill-opacity="0.6"/>'
         "</pattern></defs>")

def colour(table: dict[str, str], value: str) -> str:
    return table.get(value) or FALLBACK[sum(map(ord, value)) % len(FALLBACK)]


def ink(fill: str) -> str:
    """Text on ``fill`` (#rrggbb): dark on a light colour, white on a dark one."""
    r, g, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
    return "#212529" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "white"

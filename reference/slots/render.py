"""The text picture of a slots observation, for ``deployspec show``.

``prod A+ci release: 1 1`` reads: the name production (``stag``: staging) routes to
site A, which deploys continuously (``+ci``; a swap moves it unless it is sticky), whose
reference is the tag ``release`` (``@1`` for a digest, ``-`` for none); its
instances run digest 1 (``x1`` failing to start on 1, ``x?`` nothing to pull, ``.`` empty).
"""

from __future__ import annotations

from typing import Any

TITLES = ("slots (digest each; x failing, ? none, . empty)", "registry")
#: how to read a line, under the titles
KEY = ("<slot> <site>[+ci] <tag|@digest|->: <digest>...",
       "<tag>=<digest> bad=<unhealthy> hooks=<webhooks due> ok=<validated>")


def _instance(i: dict[str, Any]) -> str:
    if i["status"] == "empty":
        return "."
    mark = "x" if i["status"] == "crash_loop" else ""
    return f"{mark}{'?' if i['digest'] is None else i['digest']}"


def _ci(s: dict[str, Any]) -> str:
    """``+ci`` where the slot's content has continuous deployment on (the webhook's way in)."""
    return "+ci" if any(x["name"] == "DOCKER_ENABLE_CI" and x["value"] for x in s["settings"]) else ""


def _slot(name: str, s: dict[str, Any]) -> str:
    img = s["image"]
    ref = "-" if img is None else (img["tag"] if "tag" in img else f"@{img['digest']}")
    return f"{name[:4]} {s['site']}{_ci(s)} {ref}: {' '.join(_instance(i) for i in s['instances'])}"


def lane_parts(s: dict[str, Any]) -> list[str]:
    """A slot's label in a picture, a part per thing a step may change: its site with
    ``+ci`` (a swap moves continuous deployment with the content unless it is sticky) and
    its image reference; a part that changes is written under the step."""
    img = s["image"]
    parts = [f"site {s['site']}{_ci(s)}"]
    if img is not None:
        parts.append(f"image tag={img['tag']}" if "tag" in img else f"image digest={img['digest']}")
    return parts


def render_state(obs: dict[str, Any]) -> tuple[str, str]:
    lanes = " | ".join(_slot(n, obs["slots"][n]) for n in ("production", "staging"))
    reg = obs["registry"]
    tags = " ".join(f"{t}={d}" for t, d in reg["tags"].items()) or "no tags"
    bad = [str(d["id"]) for d in reg["digests"] if not d["healthy"]]
    parts = [tags]
    if bad:
        parts.append("bad=" + ",".join(bad))
    if reg["pending_deliveries"]:
        parts.append(f"hooks={reg['pending_deliveries']}")
    if obs["validated"]:
        parts.append("ok=" + ",".join(map(str, obs["validated"])))
    if obs["last_swap"] == "aborted":
        parts.append("swap aborted")
    return lanes, " ".join(parts)

"""The state of one App Service app with two deployment slots, fed by a container registry.

Two *sites* (the web apps #316 calls "A" and "B") hold the content: an image
reference (``linuxFxVersion``), app settings and one container per instance.
The slot *names* ``production`` and ``staging`` point at sites; a swap trades
them, so routing and the CI/CD URL follow the name while the content stays put
(``shared/domain/appservice.md``, "Swap"). Everything is frozen and made of
tuples, so a state hashes, compares and can be explored, shrunk and replayed.
"""

from __future__ import annotations

import attrs

# Container status of one instance.
RUNNING = "running"        # pulled a healthy digest and started
CRASH_LOOP = "crash_loop"  # failed to start (bad image, or nothing to pull); retried forever
EMPTY = "empty"            # no image configured: the placeholder ``DOCKER`` (c4127ba app-service/main.tf, for ase.tf's
                           # image = ""), or no site_config at all (the staging slot at 242e0a9: not a container app)
INSTANCE_STATUSES = (RUNNING, CRASH_LOOP, EMPTY)

PRODUCTION = "production"
STAGING = "staging"
SLOT_NAMES = (PRODUCTION, STAGING)

#: the one mutable tag cobalt deployed (``:release`` in the ISO and SR tfvars at 242e0a9)
RELEASE = "release"
#: the app setting that turns on the CD webhook endpoint (242e0a9 app-service/main.tf)
DOCKER_ENABLE_CI = "DOCKER_ENABLE_CI"


@attrs.frozen
class Image:
    """A ``DOCKER|registry/image:tag`` or ``@digest`` reference: exactly one of the two.

    A never-reused build tag behaves as a digest if nothing can move it (ACR: lock a
    deployed tag against writes), so it is one.
    """

    tag: str | None = None
    digest: int | None = None

    def __attrs_post_init__(self):
        if (self.tag is None) == (self.digest is None):
            raise ValueError("an image reference is either a tag or a digest")


@attrs.frozen
class Instance:
    """One container: the digest it pulled (None: nothing pulled) and how it fares."""

    digest: int | None
    status: str


@attrs.frozen
class Site:
    """One web app's content. ``settings`` are (name, value) app settings."""

    name: str
    image: Image | None = None
    settings: tuple[tuple[str, bool], ...] = ()
    instances: tuple[Instance, ...] = ()

    def setting(self, name: str) -> bool:
        return dict(self.settings).get(name, False)

    def with_setting(self, name: str, value: bool) -> Site:
        rest = tuple((n, v) for n, v in self.settings if n != name)
        return attrs.evolve(self, settings=tuple(sorted(rest + ((name, value),))))


@attrs.frozen
class Webhook:
    """A registry webhook: posts to the CI/CD URL of the slot *name* ``target``.

    ``scope`` None is registry-wide (every push), as ``az acr webhook create``
    without ``--scope`` made it in cobalt (242e0a9 app-service/main.tf).
    """

    target: str
    scope: str | None = None

    def fires_on(self, tag: str) -> bool:
        """Whether a push of ``<repository>:tag`` matches the scope, read as ACR reads it
        (the ``Webhook.scope`` of the Container Registry API): empty is every event in
        the registry, ``repo:tag`` that tag only, ``repo:*`` every tag of ``repo``, and a
        bare ``repo`` means ``repo:latest``. The model's registry holds one repository
        (the app's), so the repository part is taken to name it."""
        if not self.scope:  # None or "": registry-wide
            return True
        _repository, _, scoped = self.scope.partition(":")
        return (scoped or "latest") in ("*", tag)


@attrs.frozen
class Registry:
    """``digests[i]``: whether digest i's container starts (healthy); ``tags``: (tag, digest)."""

    digests: tuple[bool, ...] = ()
    tags: tuple[tuple[str, int], ...] = ()
    webhook: Webhook | None = None
    #: push notifications queued for the webhook, not yet delivered (deliveries are asynchronous)
    pending: int = 0

    def resolve(self, image: Image | None) -> int | None:
        """The digest a pull of ``image`` gets now (None: nothing to pull)."""
        if image is None:
            return None
        if image.digest is not None:
            return image.digest
        return dict(self.tags).get(image.tag)

    def healthy(self, digest: int) -> bool:
        return self.digests[digest]


@attrs.frozen
class SlotsState:
    registry: Registry
    sites: tuple[Site, Site]
    #: index into ``sites`` of the site the name ``production`` routes to
    production: int = 0
    #: setting names marked "deployment slot setting" (sticky: they stay with the name)
    slot_setting_names: tuple[str, ...] = ()
    #: digests the pipeline validated in staging, in order (history)
    validated: tuple[int, ...] = ()
    #: outcome of the most recent swap: None, "completed" or "aborted"
    last_swap: str | None = None

    # ---- reading ---------------------------------------------------------
    def index(self, slot: str) -> int:
        return self.production if slot == PRODUCTION else 1 - self.production

    def site(self, slot: str) -> Site:
        return self.sites[self.index(slot)]

    # ---- writing (each returns a new state) --------------------------------
    def with_site(self, slot: str, site: Site) -> SlotsState:
        sites = list(self.sites)
        sites[self.index(slot)] = site
        return attrs.evolve(self, sites=tuple(sites))

    def with_registry(self, **changes) -> SlotsState:
        return attrs.evolve(self, registry=attrs.evolve(self.registry, **changes))

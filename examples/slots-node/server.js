#!/usr/bin/env node
// An Azure App Service deployment pipeline in plain Node.js (no dependencies):
// a container registry, a production and a staging slot, and a CI/CD pipeline,
// speaking the deployspec contract protocol (docs/protocol.md) on stdin/stdout.
//
// By default it is microsoft/cobalt's design before PR #324 (cobalt #316): both
// slots point at the mutable tag `:release`, and Terraform gives the production
// site DOCKER_ENABLE_CI plus a registry-wide webhook to production's CI/CD URL.
// Every pull re-resolves the tag, so a push reaches production unreviewed, and a
// swap back "rolls back" to whatever the tag points at now.
//
//   deployspec contract --exec "node examples/slots-node/server.js" --model slots
//
// With --immutable it is the fix (Microsoft's guidance): the pipeline points a
// slot at the digest it just pushed, never at a tag, and no webhook is created.
//
//   deployspec contract --exec "node examples/slots-node/server.js --immutable" --model slots
"use strict";
const readline = require("readline");

const IMMUTABLE = process.argv.includes("--immutable");
const TAG = "release";
const CI = "DOCKER_ENABLE_CI";
let config, registry, slots, validated, lastSwap;

// --- the platform ---------------------------------------------------------------
const container = (image) => { // a container that has just pulled `image` (linuxFxVersion)
  if (image === null) return { digest: null, status: "empty" }; // the bare DOCKER placeholder
  const digest = "digest" in image ? image.digest : registry.tags[image.tag]; // a tag is resolved now
  if (digest === undefined) return { digest: null, status: "crash_loop" }; // the tag does not exist yet
  return { digest, status: registry.digests[digest].healthy ? "running" : "crash_loop" };
};
const slot = (site, image, settings, n) => ({ site, image, settings, instances: Array.from({ length: n }, () => container(image)) });
const restart = (s) => { s.instances = s.instances.map(() => container(s.image)); };
const ciSetting = () => ({ name: CI, value: true, sticky: config.ci_sticky === true });

// Terraform's starting points (the `start` bound; none given: empty slots).
function reset(cfg) {
  config = cfg;
  const n = cfg.instances ?? 2, start = cfg.start ?? "empty";
  const starts = ["empty", "release", "release-unbuilt", "webhook", "webhook-staging"];
  if (!starts.includes(start)) throw new Error(`unknown start ${start}`);
  registry = { digests: [], tags: {}, webhook: null, pending_deliveries: 0 };
  validated = []; lastSwap = null;
  if (start === "release") { registry.digests.push({ id: 0, healthy: true }); registry.tags[TAG] = 0; }
  const both = start === "release" || start === "release-unbuilt"; // both slots on :release
  const site = start === "webhook"; // cobalt before PR #324: only the site has the image, the setting and the webhook
  const staged = start === "webhook-staging"; // cobalt's design proposal: both on :release, the webhook at staging
  slots = {
    production: slot("A", both || site || staged ? { tag: TAG } : null, site || staged ? [ciSetting()] : [], n),
    staging: slot("B", both || staged ? { tag: TAG } : null, staged ? [ciSetting()] : [], n),
  };
  if (site) registry.webhook = { target: "production", scope: null };
  if (staged) registry.webhook = { target: "staging", scope: "app:release" };
}

const named = (name) => {
  if (!Object.hasOwn(slots, name)) throw new Error(`no slot named ${JSON.stringify(name)}`);
  return slots[name];
};
const instancesWith = (a) => { // the slot's instance list, if it has instance a.instance
  const s = named(a.slot);
  return a.instance >= 0 && a.instance < s.instances.length ? s.instances : null;
};

// An ACR webhook scope as the registry reads it: empty = every push, "repo:tag" that tag,
// "repo:*" every tag, a bare "repo" is "repo:latest" (one repository here: the app's).
const scopeMatches = (scope, tag) => {
  if (!scope) return true;
  const i = scope.indexOf(":");
  const scoped = i < 0 ? "latest" : scope.slice(i + 1);
  return scoped === "*" || scoped === tag;
};

// --- the actions ------------------------------------------------------------------
// Each returns undefined when it is done, or the reason it is refused (state unchanged).
const api = {
  push({ healthy = true }) {
    const id = registry.digests.length;
    registry.digests.push({ id, healthy });
    registry.tags[TAG] = id;
    const hook = registry.webhook;
    if (hook && scopeMatches(hook.scope, TAG)) registry.pending_deliveries += 1;
  },
  deliver_webhook() {
    if (registry.pending_deliveries === 0) return "no webhook delivery pending";
    registry.pending_deliveries -= 1;
    const target = slots[registry.webhook.target];
    // The payload does not choose the image: the slot restarts and pulls its configured reference.
    if (target.settings.some((s) => s.name === CI && s.value)) restart(target);
  },
  set_image({ slot: name }) {
    const s = named(name);
    if (IMMUTABLE) {
      if (!registry.digests.length) return "nothing built yet: no digest to deploy";
      s.image = { digest: registry.digests.length - 1 }; // the build just pushed, by digest
    } else {
      s.image = { tag: TAG }; // cobalt's app service module: image = "<name>:release" on both slots
      if (name === "production") { // ... and on the site: DOCKER_ENABLE_CI, plus the registry-wide webhook
        if (!s.settings.some((x) => x.name === CI)) s.settings.push(ciSetting());
        registry.webhook ??= { target: "production", scope: null };
      }
    }
    restart(s);
  },
  validate() {
    const st = slots.staging;
    if (!st.instances.every((i) => i.status === "running")) return "validation fails: staging is not running an image on every instance";
    const seen = [...new Set(st.instances.map((i) => i.digest))].sort((a, b) => a - b);
    validated.push(...seen.filter((d) => !validated.includes(d))); // new ones, in digest order
  },
  swap() {
    const src = slots.staging, tgt = slots.production;
    restart(src); // phase 1: production's sticky settings applied to staging's instances, which restart
    if (src.instances.some((i) => i.status === "crash_loop")) { lastSwap = "aborted"; return; } // phase 2: revert
    const keep = (s) => s.settings.filter((x) => x.sticky), move = (s) => s.settings.filter((x) => !x.sticky);
    slots = { // phase 4: the names trade places; content (image, non-sticky settings) goes with the site
      production: { ...src, settings: [...keep(tgt), ...move(src)] },
      staging: { ...tgt, settings: [...keep(src), ...move(tgt)] },
    };
    restart(slots.staging); // phase 5: the former production instances restart under the staging name
    lastSwap = "completed";
  },
  restart({ slot: name }) { restart(named(name)); },
  scale_out() { for (const s of Object.values(slots)) s.instances.push(container(s.image)); },
  recycle(a) {
    const list = instancesWith(a);
    if (!list) return `${a.slot} has no instance ${a.instance}`;
    list[a.instance] = container(slots[a.slot].image);
  },
  crash_retry(a) {
    const list = instancesWith(a);
    if (!list) return `${a.slot} has no instance ${a.instance}`;
    if (list[a.instance].status !== "crash_loop") return `${a.slot} instance ${a.instance} is not failing to start`;
    list[a.instance] = container(slots[a.slot].image);
  },
};

const observe = () => ({ registry, slots, validated, last_swap: lastSwap });

// --- the protocol -------------------------------------------------------------------
const name = IMMUTABLE ? "slots-node --immutable" : "slots-node";
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let req;
  try { req = JSON.parse(line); } catch { return reply({ id: null, type: "error", message: "not JSON" }); }
  const { id } = req;
  try {
    if (req.type === "reset") { reset(req.config); return reply({ id, type: "reset_ok", protocol: 1, implementation: name }); }
    if (req.type === "observe") return reply({ id, type: "observation", observation: observe() });
    const verb = req.type === "action" && api[req.action.type];
    if (!verb) return reply({ id, type: "error", message: `unknown request ${line}` });
    const reason = verb(req.action);
    reply(reason ? { id, type: "rejected", reason, observation: observe() } : { id, type: "performed", observation: observe() });
  } catch (e) { reply({ id, type: "error", message: String(e) }); }
});
const reply = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");

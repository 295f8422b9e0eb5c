#!/usr/bin/env node
// A Cloud Foundry deployment controller in plain Node.js (no dependencies),
// speaking the deployspec contract protocol (docs/protocol.md) on stdin/stdout.
//
// It behaves like the Cloud Controller before PR #3072 (cloud_controller_ng
// 4528366a1b, the seed's version, cloud_controller_ng #3019): creating a
// deployment supersedes only a DEPLOYING one, so a CANCELING deployment stays
// active beside the new one, and the cancel step keeps the newest web process
// that is not its own -- the new deployment's process that never ran.
//
//   deployspec contract --exec "node examples/capi-node/server.js" --model capi
//
// finds that bug; see README.md.
"use strict";
const readline = require("readline");

let app, droplets, processes, deployments, nextProcessId;
let late; // scale steps the last dispatch's snapshot sent that have not started yet
const ACTIVE = ["DEPLOYING", "PREPAUSED", "PAUSED", "CANCELING"];

function reset() {
  app = null; droplets = []; processes = []; deployments = []; nextProcessId = 0; late = [];
}

const proc = (id) => processes.find((p) => p.id === id);
const scaleTo = (p, n) => {
  n = Math.max(n, 0);
  p.instances = p.instances.slice(0, n).concat(Array(Math.max(n - p.instances.length, 0)).fill("STARTING"));
};
const newProcess = (droplet, n) => {
  const p = { id: nextProcessId++, droplet, instances: Array(n).fill("STARTING") };
  processes.push(p);
  return p;
};
const move = (d, state, value, reason) => Object.assign(d, { state, status_value: value, status_reason: reason });
class Retry extends Error {} // the updater step fails; the next dispatch retries it

// --- the API (app/actions/*) -------------------------------------------------
const api = {
  push(a) {
    if (app) return "the app already exists";
    app = { droplet: 0, started: true }; droplets = [true];
    newProcess(0, a.instances);
  },
  stage(a) {
    if (!app) return "no app: push first";
    droplets.push(a.healthy); app.droplet = droplets.length - 1;
  },
  deploy(a) {
    if (!app || processes.length === 0) return "no app: push first";
    if (a.strategy !== "rolling" || a.canary_steps.length || a.web_instances) return "only rolling deployments";
    if (a.max_in_flight !== 1) return "no max_in_flight before 2024";
    const rollback = a.revision !== undefined && a.revision !== null; // cf rollback
    if (rollback) {
      if (a.new_droplet !== undefined && a.new_droplet !== null) return "Cannot set both fields 'droplet' and 'revision'";
      // revisions: the push's (droplet 0) and each deployment's; the latest, the newest deployment's
      if (a.revision !== 0 && !deployments.some((d) => d.droplet === a.revision)) return "The revision does not exist";
      const latest = deployments.length ? deployments[deployments.length - 1].droplet : 0;
      if (a.revision === latest) return "Unable to rollback: the same as the deployed revision";
    }
    // the bug, part 1: only a DEPLOYING deployment is superseded (of two, the oldest:
    // the database's first row)
    const previous = deployments.find((d) => d.state === "DEPLOYING");
    const owic = previous ? previous.owic : processes[0].instances.length;
    const before = app.droplet;
    if (a.new_droplet !== undefined && a.new_droplet !== null) { // cf push --strategy rolling
      droplets.push(a.new_droplet); app.droplet = droplets.length - 1;
    } else if (rollback) {
      app.droplet = a.revision;
    }
    const p = newProcess(app.droplet, 1);
    deployments.push({
      id: deployments.length, state: "DEPLOYING", status_value: "ACTIVE", status_reason: "DEPLOYING",
      deploying_process: p.id, droplet: app.droplet, previous_droplet: before, owic,
      max_in_flight: 1, strategy: "rolling", canary_steps: [], canary_step: 0, web_instances: null,
    });
    if (previous) move(previous, "DEPLOYED", "FINALIZED", "SUPERSEDED");
  },
  cancel() {
    const d = [...deployments].reverse().find((d) => ACTIVE.includes(d.state));
    if (!d) return "no active deployment to cancel";
    if (!["DEPLOYING", "CANCELING"].includes(d.state)) return `cannot cancel a ${d.state} deployment`;
    app.droplet = d.previous_droplet;
    move(d, "CANCELING", "ACTIVE", "CANCELING");
  },
  continue_() { return "no canary deployments before 2024"; },
  scale(a) {
    const p = processes[processes.length - 1];
    if (!p) return "no app: push first";
    if (deployments.some((d) => d.state === "DEPLOYING")) return "Cannot scale this process while a deployment is in flight.";
    scaleTo(p, a.instances);
  },
  tick(a) {
    if (!app) return "no app: push first";
    for (const id of late) run(scaleStep, id, true); // first what the last dispatch left, as things are now
    late = [];
    for (const d of deployments) // a deployment whose process is gone is finalized first
      if (ACTIVE.includes(d.state) && !proc(d.deploying_process)) move(d, "DEPLOYED", "FINALIZED", "DEGENERATE");
    const work = deployments.filter((d) => d.state === "DEPLOYING").map((d) => [d.id, scaleStep])
      .concat(deployments.filter((d) => d.state === "CANCELING").map((d) => [d.id, cancelStep]));
    for (const [id, step] of work) {
      if (a.failed.includes(id)) continue;
      if (step === scaleStep && (a.late || []).includes(id)) { late.push(id); continue; }
      run(step, id, !a.reports_unavailable.includes(id));
    }
  },
  runtime(a) { // Diego: the lowest STARTING instance settles
    const p = proc(a.process);
    if (!p) return `no web process P${a.process}`;
    const i = p.instances.indexOf("STARTING");
    if (i < 0) return `P${a.process} has no STARTING instance`;
    p.instances[i] = droplets[p.droplet] ? "RUNNING" : "CRASHED";
  },
};

// --- the deployment updater (lib/cloud_controller/deployment_updater) ----------
function run(step, id, reports) {
  const saved = JSON.stringify([processes, deployments]); // the step is one transaction
  try { step(deployments[id], reports); } catch (e) {
    if (!(e instanceof Retry)) throw e;
    [processes, deployments] = JSON.parse(saved);
  }
}

function scaleStep(d, reports) {
  const deploying = proc(d.deploying_process);
  if (!deploying) throw new Retry();
  const donor = processes.find((p) => p.instances.length > 0);
  if (!donor) throw new Retry();
  if (!reports || deploying.instances.some((i) => i !== "RUNNING")) return;
  move(d, "DEPLOYING", "ACTIVE", "DEPLOYING"); // no look at the state: a cancel since the snapshot is undone
  if (deploying.instances.length >= d.owic) { // finalize
    processes = processes.filter((p) => p.id === deploying.id);
    return move(d, "DEPLOYED", "FINALIZED", "DEPLOYED");
  }
  const oldest = processes[0];
  if (donor === deploying) {
    if (donor.instances.length === 1 && donor !== oldest) throw new Retry();
    // two ORM objects for one row: the donor's n - 1 is overwritten by n + 1
    return scaleTo(deploying, deploying.instances.length + 1);
  }
  if (donor.instances.length === 1 && donor !== oldest) processes = processes.filter((p) => p !== donor);
  else scaleTo(donor, donor.instances.length - 1);
  scaleTo(deploying, deploying.instances.length + 1);
}

function cancelStep(d) {
  if (!proc(d.deploying_process)) throw new Retry(); // locking its own process fails
  // the bug, part 2: the newest web process that is not this deployment's own
  const others = processes.filter((p) => p.id !== d.deploying_process);
  if (!others.length) throw new Retry();
  const prior = others[others.length - 1];
  scaleTo(prior, d.owic);
  processes = [prior];
  move(d, "CANCELED", "FINALIZED", "CANCELED");
}

const observe = () => ({
  app, droplets: droplets.map((healthy, id) => ({ id, healthy })), processes, deployments,
});

// --- the protocol -------------------------------------------------------------
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let req;
  try { req = JSON.parse(line); } catch { return reply({ id: null, type: "error", message: "not JSON" }); }
  const { id } = req;
  if (req.type === "reset") { reset(); return reply({ id, type: "reset_ok", protocol: 1, implementation: "capi-node" }); }
  if (req.type === "observe") return reply({ id, type: "observation", observation: observe() });
  const verb = req.type === "action" && api[req.action.type];
  if (!verb) return reply({ id, type: "error", message: `unknown request ${line}` });
  const reason = verb(req.action);
  reply(reason ? { id, type: "rejected", reason, observation: observe() } : { id, type: "performed", observation: observe() });
});
const reply = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");

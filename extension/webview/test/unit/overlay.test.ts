import assert from "node:assert/strict";
import { test } from "node:test";
import { applyRunEvent, edgeCounters, emptyOverlay, messagesPerMinute } from "../../src/overlay";
import type { RunEvent } from "../../../src/canvas/protocol";
import { allPatterns } from "./fixtures";

const flow = allPatterns.flow!;
const T0 = 1_800_000_000_000;

test("run events light up agents and edges with rounds, time left and messages a minute", () => {
  const events: RunEvent[] = [
    { ts: T0, runId: "r1", interactionId: "i5", edgeId: "i5-e1", event: "configured" },
    { ts: T0 + 1000, runId: "r1", event: "agent_started", agentId: "debater_a" },
    { ts: T0 + 2000, runId: "r1", interactionId: "i5", edgeId: "i5-e1", event: "step", step: 1, from: "debater_a", to: "judge" },
    { ts: T0 + 30_000, runId: "r1", interactionId: "i5", edgeId: "i5-e1", event: "step", step: 2, from: "debater_a", to: "judge" },
  ];
  let o = emptyOverlay;
  for (const e of events) o = applyRunEvent(o, e, flow);
  assert.equal(o.running, true);
  assert.equal(o.runId, "r1");
  assert.deepEqual(o.nodes.debater_a, { active: true, messages: 2 });
  assert.equal(o.nodes.judge.active, true);
  const er = o.edges["i5-e1"];
  assert.equal(er.active, true);
  assert.equal(er.rounds, 2);
  assert.equal(er.maxRounds, 3); // from the edge's termination (any: max_rounds 3, judge)
  assert.equal(er.deadline, T0 + 600_000); // params.timeout_ms
  assert.equal(edgeCounters(er, T0 + 60_000), "2/3r · 9m left · 2/min");
  assert.equal(messagesPerMinute(er, T0 + 62_000), 1);
  assert.equal(edgeCounters(undefined, T0), undefined);
  // The old overlay is not changed (state updates are copies).
  assert.equal(emptyOverlay.running, false);

  o = applyRunEvent(o, { ts: T0 + 40_000, runId: "r1", interactionId: "i5", edgeId: "i5-e1", event: "terminated", reason: "judge_decision" }, flow);
  assert.equal(o.edges["i5-e1"].active, false);
  o = applyRunEvent(o, { ts: T0 + 41_000, runId: "r1", event: "run_finished" }, flow);
  assert.equal(o.running, false);
  assert.equal(o.nodes.debater_a.active, false);
});

test("an interaction-level event applies to all its edges; a new run starts afresh", () => {
  let o = applyRunEvent(emptyOverlay, { ts: new Date(T0).toISOString(), runId: "r1", interactionId: "i1", event: "interaction_started" }, flow);
  assert.deepEqual(Object.keys(o.edges).sort(), ["i1-e1", "i1-e2"]);
  assert.equal(o.edges["i1-e1"].maxRounds, 2);
  o = applyRunEvent(o, { ts: T0, runId: "r2", event: "agent_started", agentId: "w1" }, flow);
  assert.equal(o.runId, "r2");
  assert.deepEqual(Object.keys(o.edges), []);
});

test("a proposal_conflict marks both agents of the run (another run's agent is only named), through the end of the run", () => {
  let o = applyRunEvent(emptyOverlay, { ts: T0, runId: "r1", event: "agent_started", agentId: "worker_1" }, flow);
  o = applyRunEvent(o, { ts: T0 + 1, runId: "r1", event: "proposal_conflict", agentId: "worker_2", otherAgentId: "worker_1", otherRunId: "r1", path: "src/a.ts" }, flow);
  o = applyRunEvent(o, { ts: T0 + 2, runId: "r1", event: "proposal_conflict", agent: "worker_3", otherAgentId: "worker_9", otherRunId: "r0", path: "src/a.ts" }, flow);
  o = applyRunEvent(o, { ts: T0 + 3, runId: "r1", event: "proposal_conflict", agentId: "worker_2", otherAgentId: "worker_1", otherRunId: "r1", path: "src/a.ts" }, flow);
  assert.deepEqual(o.nodes.worker_1, { active: true, messages: 0, conflicts: ["worker_2 · src/a.ts"] });
  assert.deepEqual(o.nodes.worker_2.conflicts, ["worker_1 · src/a.ts"]);
  assert.deepEqual(o.nodes.worker_3.conflicts, ["worker_9 (run r0) · src/a.ts"]);
  assert.equal(o.nodes.worker_9, undefined);
  o = applyRunEvent(o, { ts: T0 + 4, runId: "r1", event: "run_finished" }, flow);
  assert.deepEqual(o.nodes.worker_1.conflicts, ["worker_2 · src/a.ts"]);
  assert.equal(o.nodes.worker_1.active, false);
});

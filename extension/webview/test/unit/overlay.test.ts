import assert from "node:assert/strict";
import { test } from "node:test";
import { applyRunEvent, clock, emptyOverlay, messagesPerMinute, restoreAgentSpend, runLine, runLineChars } from "../../src/overlay";
import { engineRound } from "../../../src/canvas/rounds";
import type { FlowModel, RunEvent } from "../../../src/canvas/protocol";
import { agentSpendLabel, readSpend, spendLabel } from "../../../src/canvas/spend";
import { allPatterns } from "./fixtures";

const flow = allPatterns.flow!;
const T0 = 1_800_000_000_000;

test("run events light up agents and edges; the run line says the round the engine counts, the time left and messages a minute", () => {
  // the engine's own events for two rounds of a debate (agent_started and step carry the rounds
  // completed so far, from 0; terminated the rounds in all), with bus messages between them
  const events: RunEvent[] = [
    { ts: T0, runId: "r1", interactionId: "i5", event: "interaction_started" },
    { ts: T0, runId: "r1", interactionId: "i5", event: "configured" },
    { ts: T0 + 1000, runId: "r1", interactionId: "i5", edgeId: "i5-e1", event: "message", from: "debater_a", to: "judge" },
    { ts: T0 + 1000, runId: "r1", interactionId: "i5", edgeId: "i5-e1", event: "agent_started", agent: "debater_a", round: 0 },
    { ts: T0 + 2000, runId: "r1", interactionId: "i5", edgeId: "i5-e1", event: "step", step: 1, round: 0, from: "debater_a", to: "judge" },
    { ts: T0 + 2000, runId: "r1", interactionId: "i5", edgeId: "i5-e1", event: "message", from: "judge", to: "debater_a" },
    { ts: T0 + 3000, runId: "r1", interactionId: "i5", edgeId: "i5-e2", event: "message", from: "debater_b", to: "judge" },
    { ts: T0 + 3000, runId: "r1", interactionId: "i5", edgeId: "i5-e2", event: "agent_started", agent: "debater_b", round: 0 },
    { ts: T0 + 4000, runId: "r1", interactionId: "i5", edgeId: "i5-e2", event: "step", step: 2, round: 0, from: "debater_b", to: "judge" },
  ];
  let o = emptyOverlay;
  for (const e of events) o = applyRunEvent(o, e, flow);
  assert.equal(o.running, true);
  assert.equal(o.runId, "r1");
  assert.deepEqual(o.nodes.debater_a, { active: true, messages: 2, state: "running" });
  assert.equal(o.nodes.judge.active, true);
  assert.equal(o.edges["i5-e1"].active, true);
  // six events on the edges, two turns: still the first round, as the engine says
  assert.deepEqual({ ...o.interactions.i5, messages: o.interactions.i5.messages.length }, { state: "running", round: 1, maxRounds: 3, timeout: 600_000, deadline: T0 + 600_000, messages: 5 });
  assert.equal(runLine(o, "i5", T0 + 60_000), "round 1/3 · 9:00 left · 5/min");
  assert.equal(runLine(o, "i5", T0 + 62_500), "round 1/3 · 8:58 left · 2/min", "the messages of the last minute, on all its edges");
  assert.equal(messagesPerMinute(o.edges["i5-e1"], T0 + 62_000), 0);
  assert.equal(runLine(o, "i1", T0), undefined, "an interaction the run has not reached has no line");
  // the second round
  o = applyRunEvent(o, { ts: T0 + 5000, runId: "r1", interactionId: "i5", edgeId: "i5-e1", event: "agent_started", agent: "debater_a", round: 1 }, flow);
  assert.equal(runLine(o, "i5", T0 + 5000), "round 2/3 · 9:55 left · 5/min");
  // it ends after two rounds (the judge decided): the engine's count, and the clock stops
  o = applyRunEvent(o, { ts: T0 + 40_000, runId: "r1", interactionId: "i5", event: "terminated", reason: "judge_decision", rounds: 2, status: "completed" }, flow);
  assert.equal(o.edges["i5-e1"].active, false);
  assert.equal(o.edges["i5-e1"].state, "done");
  assert.equal(runLine(o, "i5", T0 + 40_000), "round 2/3 · done");
  assert.equal(runLine(o, "i5", T0 + 3_600_000), "round 2/3 · done", "no clock running after the end");
  o = applyRunEvent(o, { ts: T0 + 41_000, runId: "r1", event: "run_finished", status: "completed" }, flow);
  assert.equal(o.running, false);
  assert.equal(o.nodes.debater_a.active, false);
  assert.equal(o.nodes.debater_a.state, "done"); // still at work when the run ended: it shares the outcome
  // The old overlay is not changed (state updates are copies).
  assert.equal(emptyOverlay.running, false);
});

test("the run's end stops every interaction's clock, and the label keeps the room its run line needs from the start", () => {
  let o = applyRunEvent(emptyOverlay, { ts: T0, runId: "r1", interactionId: "i10", event: "configured" }, flow);
  o = applyRunEvent(o, { ts: T0 + 1000, runId: "r1", interactionId: "i10", edgeId: "i10-e1", event: "agent_started", agent: "proposer", round: 0 }, flow);
  const chars = runLineChars(o, "i10");
  for (const now of [T0, T0 + 1000, T0 + 599_000, T0 + 700_000]) assert.ok(runLine(o, "i10", now)!.length <= chars, `${runLine(o, "i10", now)} fits ${chars}`);
  o = applyRunEvent(o, { ts: T0 + 2000, runId: "r1", event: "run_stopped", status: "stopped" }, flow);
  assert.equal(runLine(o, "i10", T0 + 5000), "round 1/5 · failed");
  assert.equal(runLine(o, "i10", T0 + 5_000_000), "round 1/5 · failed");
  assert.ok(runLine(o, "i10", T0)!.length <= chars);
  assert.deepEqual([clock(599_001), clock(60_000), clock(3_723_000), clock(-5)], ["10:00", "1:00", "1:02:03", "0:00"]);
});

test("the round is the engine's, read the same way by the Runs view: from 1 during a turn, the rounds completed at the end", () => {
  assert.equal(engineRound({ event: "agent_started", round: 0 }), 1);
  assert.equal(engineRound({ event: "step", round: 2 }), 3);
  assert.equal(engineRound({ event: "terminated", rounds: 2 }), 2);
  assert.equal(engineRound({ event: "message", round: 4 }), undefined, "messages are not rounds");
  assert.equal(engineRound({ event: "step", step: 7 } as never), undefined, "a step number is not a round");
  assert.equal(engineRound({ event: "step", round: -1 }), undefined);
  assert.equal(engineRound({ event: "terminated", rounds: "2" }), undefined);
});

test("agents' states: running, waiting for the user, running again once answered, failed or done", () => {
  const ev = (ts: number, e: Partial<RunEvent>) => ({ ts: T0 + ts, runId: "r1", ...e }) as RunEvent;
  let o = emptyOverlay;
  const steps: Array<[Partial<RunEvent>, string, string | undefined]> = [
    [{ event: "agent_started", agent: "coder" }, "coder", "running"],
    [{ event: "question_asked", agent: "coder", id: "q_1" }, "coder", "waiting"],
    [{ event: "question_answered", agent: "coder", id: "q_1", outcome: "answered" }, "coder", "running"],
    [{ event: "dependency_requested", agent: "coder", id: "d_1" }, "coder", "waiting"],
    [{ event: "dependency_resolved", agent: "coder", id: "d_1", outcome: "provided" }, "coder", "running"],
    [{ event: "agent_finished", agent: "coder", status: "completed" }, "coder", "done"],
    [{ event: "agent_started", agent: "tester" }, "tester", "running"],
    [{ event: "agent_finished", agent: "tester", status: "failed", error: "exit status 2" }, "tester", "failed"],
    // an answer for someone who was not waiting changes nothing
    [{ event: "question_answered", agent: "tester", id: "q_2" }, "tester", "failed"],
  ];
  steps.forEach(([e, who, want], i) => {
    o = applyRunEvent(o, ev(i, e), flow);
    assert.equal(o.nodes[who]?.state, want, `${e.event} → ${who} ${want}`);
  });
  assert.equal(o.nodes.coder.active, false);
  // an interaction that fails marks its edges failed; a run stopped settles whoever was still at work
  o = applyRunEvent(o, ev(20, { interactionId: "i1", event: "interaction_started" }), flow);
  o = applyRunEvent(o, ev(21, { event: "agent_started", agent: "w1" }), flow);
  o = applyRunEvent(o, ev(22, { event: "question_asked", agent: "w1" }), flow);
  o = applyRunEvent(o, ev(23, { interactionId: "i1", event: "terminated", status: "failed", reason: "error" }), flow);
  assert.deepEqual([o.edges["i1-e1"].state, o.edges["i1-e2"].state], ["failed", "failed"]);
  o = applyRunEvent(o, ev(24, { event: "run_finished", status: "stopped" }), flow);
  assert.equal(o.nodes.w1.state, "failed");
  assert.equal(o.nodes.coder.state, "done");
});

test("an interaction-level event applies to all its edges; a new run starts afresh", () => {
  let o = applyRunEvent(emptyOverlay, { ts: new Date(T0).toISOString(), runId: "r1", interactionId: "i1", event: "interaction_started" }, flow);
  assert.deepEqual(Object.keys(o.edges).sort(), ["i1-e1", "i1-e2"]);
  assert.equal(o.interactions.i1.maxRounds, 2);
  o = applyRunEvent(o, { ts: T0, runId: "r2", event: "agent_started", agentId: "w1" }, flow);
  assert.equal(o.runId, "r2");
  assert.deepEqual(Object.keys(o.edges), []);
});

test("a proposal_conflict marks both agents of the run (another run's agent is only named), through the end of the run", () => {
  let o = applyRunEvent(emptyOverlay, { ts: T0, runId: "r1", event: "agent_started", agentId: "worker_1" }, flow);
  o = applyRunEvent(o, { ts: T0 + 1, runId: "r1", event: "proposal_conflict", agentId: "worker_2", otherAgentId: "worker_1", otherRunId: "r1", path: "src/a.ts" }, flow);
  o = applyRunEvent(o, { ts: T0 + 2, runId: "r1", event: "proposal_conflict", agent: "worker_3", otherAgentId: "worker_9", otherRunId: "r0", path: "src/a.ts" }, flow);
  o = applyRunEvent(o, { ts: T0 + 3, runId: "r1", event: "proposal_conflict", agentId: "worker_2", otherAgentId: "worker_1", otherRunId: "r1", path: "src/a.ts" }, flow);
  assert.deepEqual(o.nodes.worker_1, { active: true, messages: 0, state: "running", conflicts: ["worker_2 · src/a.ts"] });
  assert.deepEqual(o.nodes.worker_2.conflicts, ["worker_1 · src/a.ts"]);
  assert.deepEqual(o.nodes.worker_3.conflicts, ["worker_9 (run r0) · src/a.ts"]);
  assert.equal(o.nodes.worker_9, undefined);
  o = applyRunEvent(o, { ts: T0 + 4, runId: "r1", event: "run_finished" }, flow);
  assert.deepEqual(o.nodes.worker_1.conflicts, ["worker_2 · src/a.ts"]);
  assert.equal(o.nodes.worker_1.active, false);
});

test("spend events give the run's spend so far; it stays after the run ends and a new run starts afresh", () => {
  let o = emptyOverlay;
  o = applyRunEvent(o, { ts: T0, runId: "r1", event: "run_started" }, flow);
  assert.equal(o.spend, undefined);
  o = applyRunEvent(o, { ts: T0 + 1, runId: "r1", interactionId: "i5", event: "spend", agent: "debater_a", tokens: 1000, run: { tokens: 1000, costUsd: 0.01, costKnown: true } }, flow);
  o = applyRunEvent(o, { ts: T0 + 2, runId: "r1", interactionId: "i5", event: "spend", agent: "judge", tokens: 2400, run: { tokens: 3400, costUsd: 0.034, costKnown: true } }, flow);
  assert.deepEqual(o.spend, { tokens: 3400, costUsd: 0.034, costKnown: true, unreported: [] });
  assert.equal(spendLabel(o.spend), "3.4k tokens · $0.03");
  o = applyRunEvent(o, { ts: T0 + 3, runId: "r1", event: "spend", run: "garbage" }, flow);
  assert.equal(o.spend?.tokens, 3400, "a malformed spend event changes nothing");
  o = applyRunEvent(o, { ts: T0 + 4, runId: "r1", event: "run_finished" }, flow);
  assert.equal(o.running, false);
  assert.equal(o.spend?.tokens, 3400, "the last run's spend stays on the canvas");
  o = applyRunEvent(o, { ts: T0 + 5, runId: "r2", event: "run_started" }, flow);
  assert.equal(o.spend, undefined);
});

test("spend labels say what is unknown instead of guessing", () => {
  assert.equal(spendLabel(undefined), undefined);
  assert.equal(spendLabel({ tokens: 0, costUsd: 0, costKnown: true, unreported: [] }), undefined);
  assert.equal(spendLabel({ tokens: 950, costUsd: 0.0042, costKnown: true, unreported: [] }), "950 tokens · $0.0042");
  assert.equal(spendLabel({ tokens: 1_234_567, costUsd: 0, costKnown: false, unreported: [] }), "1.2M tokens · cost unknown");
  assert.equal(spendLabel({ tokens: 12_300, costUsd: 0.5, costKnown: false, unreported: ["coder"] }), "12.3k tokens · ≥ $0.50 · usage unknown: coder");
  assert.equal(spendLabel({ tokens: 0, costUsd: 0, costKnown: true, unreported: ["a", "b"] }), "spend unknown");
  assert.equal(spendLabel({ tokens: 10, costUsd: 0, costKnown: false, unreported: ["a", "b", "c"] }), "10 tokens · cost unknown · usage unknown: 3 agents");
  assert.equal(readSpend({ tokens: -1 }), undefined);
  assert.equal(readSpend(null), undefined);
  assert.deepEqual(readSpend({ tokens: 5, unreported: ["x", 3] }), { tokens: 5, costUsd: 0, costKnown: false, unreported: ["x"] });
});

test("an agent's finished turns are counted (completed or failed), from its first; a new run starts from none", () => {
  const ev = (ts: number, e: Partial<RunEvent>) => ({ ts: T0 + ts, runId: "r1", ...e }) as RunEvent;
  let o = applyRunEvent(emptyOverlay, ev(0, { event: "agent_started", agent: "coder" }), flow);
  assert.equal(o.nodes.coder.turns, undefined, "running its first turn: none finished");
  o = applyRunEvent(o, ev(1, { event: "agent_finished", agent: "coder", status: "completed" }), flow);
  assert.equal(o.nodes.coder.turns, 1);
  o = applyRunEvent(o, ev(2, { event: "agent_started", agent: "coder" }), flow);
  assert.equal(o.nodes.coder.turns, 1, "a turn under way keeps the count");
  o = applyRunEvent(o, ev(3, { event: "agent_finished", agent: "coder", status: "failed", error: "exit status 2" }), flow);
  assert.equal(o.nodes.coder.turns, 2);
  o = applyRunEvent(o, ev(4, { event: "run_finished" }), flow);
  assert.equal(o.nodes.coder.turns, 2, "kept after the run ends");
  o = applyRunEvent(o, { ts: T0 + 5, runId: "r2", event: "agent_started", agent: "coder" }, flow);
  assert.equal(o.nodes.coder.turns, undefined);
});

test("spend events give each agent its spend as it accrues; a metered agent's finished turn is not counted twice", () => {
  let o = applyRunEvent(emptyOverlay, { ts: T0, runId: "r1", event: "agent_started", agent: "debater_a" }, flow);
  assert.equal(o.nodes.debater_a.spend, undefined, "nothing before a spend event");
  o = applyRunEvent(o, { ts: T0 + 1, runId: "r1", interactionId: "i5", event: "spend", agent: "debater_a", midTurn: true, callTokens: 900, callCostUsd: 0.009 }, flow);
  assert.equal(agentSpendLabel(o.nodes.debater_a.spend), "900 tokens · $0.0090", "shown after the first call, mid-turn");
  assert.equal(o.nodes.debater_a.state, "running", "a spend event leaves the agent's state alone");
  o = applyRunEvent(o, { ts: T0 + 2, runId: "r1", interactionId: "i5", event: "spend", agent: "debater_a", midTurn: true, callTokens: 1100, callCostUsd: 0.011 }, flow);
  o = applyRunEvent(o, { ts: T0 + 3, runId: "r1", event: "agent_finished", agent: "debater_a", status: "completed" }, flow);
  o = applyRunEvent(o, { ts: T0 + 4, runId: "r1", interactionId: "i5", event: "spend", agent: "debater_a", gateway: true, tokens: 2000, costUsd: 0.02 }, flow);
  assert.equal(agentSpendLabel(o.nodes.debater_a.spend), "2k tokens · $0.02");
  // an agent the gateway does not meter adds its turns' reports; one that reports none is unknown
  o = applyRunEvent(o, { ts: T0 + 5, runId: "r1", interactionId: "i5", event: "spend", agent: "debater_b", tokens: 300, costUsd: 0.003 }, flow);
  o = applyRunEvent(o, { ts: T0 + 6, runId: "r1", interactionId: "i5", event: "spend", agent: "debater_b", tokens: 300, costUsd: 0.003 }, flow);
  o = applyRunEvent(o, { ts: T0 + 7, runId: "r1", interactionId: "i5", event: "spend", agent: "judge", unreported: true }, flow);
  assert.equal(agentSpendLabel(o.nodes.debater_b.spend), "600 tokens · $0.0060");
  assert.equal(agentSpendLabel(o.nodes.judge.spend), "spend unknown");
  assert.equal(o.nodes.debater_a.spend?.tokens, 2000, "other agents' spend is their own");
  o = applyRunEvent(o, { ts: T0 + 8, runId: "r2", event: "run_started" }, flow);
  assert.equal(o.nodes.debater_a?.spend, undefined, "a new run starts afresh");
});

test("after a reload the cards show each agent's spend from the run's checkpoint; later events are not added to it", () => {
  const restored = {
    debater_a: { tokens: 2000, costUsd: 0.02, costKnown: true, unreported: false, metered: true, reports: 2 },
    judge: { tokens: 0, costUsd: 0, costKnown: true, unreported: true, metered: false, reports: 1 },
  };
  let o = restoreAgentSpend(emptyOverlay, "r1", restored);
  assert.equal(agentSpendLabel(o.nodes.debater_a.spend), "2k tokens · $0.02");
  assert.equal(agentSpendLabel(o.nodes.judge.spend), "spend unknown");
  assert.equal(o.running, false, "a past run: nothing is shown active");
  // the run resumed: an event with the agent's next total (3 reports) replaces it
  o = applyRunEvent(o, { ts: T0, runId: "r1", interactionId: "i5", event: "spend", agent: "debater_a", midTurn: true, callTokens: 500, callCostUsd: 0.006, agentTotal: { tokens: 2500, costUsd: 0.026, costKnown: true, metered: true, reports: 3 } }, flow);
  assert.equal(agentSpendLabel(o.nodes.debater_a.spend), "2.5k tokens · $0.03");
  // one the checkpoint had already counted, late: nothing changes
  o = applyRunEvent(o, { ts: T0 + 1, runId: "r1", interactionId: "i5", event: "spend", agent: "debater_a", gateway: true, tokens: 2000, costUsd: 0.02, agentTotal: restored.debater_a }, flow);
  assert.equal(o.nodes.debater_a.spend?.tokens, 2500);
  // a checkpoint arriving after newer events keeps the newer totals; one of another run is ignored
  assert.equal(restoreAgentSpend(o, "r1", restored).nodes.debater_a.spend?.tokens, 2500);
  const r2 = applyRunEvent(o, { ts: T0 + 2, runId: "r2", event: "run_started" }, flow);
  assert.equal(restoreAgentSpend(r2, "r1", restored), r2);
});

test("ids are ids: an agent or interaction named constructor or __proto__ is looked up as itself, never as Object's own", () => {
  const ids: FlowModel = {
    ...flow,
    interactions: [{ id: "constructor", patternId: "role_play_pair", path: "/interactions/0", edges: [{ id: "constructor-e1", source: "__proto__", target: "toString", data: { termination: { type: "max_rounds", rounds: 2 } }, path: "/interactions/0/edges/0" }] }],
  };
  let o = emptyOverlay;
  assert.equal(runLine(o, "constructor", T0), undefined, "no run, no line");
  assert.equal(o.nodes.toString, undefined);
  o = applyRunEvent(o, { ts: T0, runId: "r1", interactionId: "constructor", event: "configured" }, ids);
  o = applyRunEvent(o, { ts: T0, runId: "r1", interactionId: "constructor", edgeId: "constructor-e1", event: "agent_started", agent: "__proto__", round: 0 }, ids);
  o = applyRunEvent(o, { ts: T0, runId: "r1", interactionId: "constructor", edgeId: "constructor-e1", event: "step", round: 0, from: "__proto__", to: "toString" }, ids);
  assert.equal(runLine(o, "constructor", T0), "round 1/2 · 1/min");
  assert.deepEqual(Object.keys(o.nodes).sort(), ["__proto__", "toString"]);
  assert.equal(o.nodes.__proto__.state, "running");
  assert.equal(runLine(o, "hasOwnProperty", T0), undefined);
  assert.equal(({} as Record<string, unknown>).state, undefined, "Object.prototype untouched");
});

test("the run line keeps to the room its label has: a clock never past the timeout, a round past the bound given room", () => {
  // an event stamped an hour ahead (a clock skew, a bad event): the time left is at most the timeout
  let o = applyRunEvent(emptyOverlay, { ts: T0 + 3_600_000, runId: "r1", interactionId: "i10", event: "configured" }, flow);
  assert.equal(runLine(o, "i10", T0), "round 0/5 · 10:00 left · 0/min");
  assert.ok(runLine(o, "i10", T0)!.length <= runLineChars(o, "i10"));
  o = applyRunEvent(o, { ts: T0, runId: "r1", interactionId: "i10", edgeId: "i10-e1", event: "agent_started", agent: "proposer", round: 12345 }, flow);
  assert.equal(runLine(o, "i10", T0), "round 12346/5 · 10:00 left · 0/min", "the engine's number, as it says it");
  assert.ok(runLine(o, "i10", T0)!.length <= runLineChars(o, "i10"), "and room for it");
});

// Drawing edges: what a connection becomes, on the real loader's model of testdata/connect.yaml
// and the sidecar's real pattern list.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  accepting,
  edgeData,
  findPattern,
  isPairPattern,
  participants,
  planPick,
  planConnect,
  planReconnect,
} from "../../src/connect";
import type { FlowModel } from "../../../src/canvas/protocol";
import { connectFlow, PATTERN_IDS, patterns } from "./fixtures";

const flow = connectFlow.flow!;
const pattern = (id: string) => findPattern(patterns, id)!;

test("two-party patterns are the ones whose roles make two nodes", () => {
  const pairs = PATTERN_IDS.filter((id) => isPairPattern(pattern(id)));
  assert.deepEqual(pairs, ["role_play_pair", "bilateral_negotiation", "protocol_bridge"]);
  assert.equal(isPairPattern(undefined), false);
  assert.equal(isPairPattern({ id: "X", patternId: "x", name: "x", topology: "p2p", roles: "a, b" }), false);
  assert.equal(findPattern(patterns, "P05")?.patternId, "debate_judge");
  assert.equal(findPattern(patterns, "p05")?.patternId, "debate_judge");
});

test("a node with no interaction asks for a pattern; the pick makes an interaction with the pattern's defaults", () => {
  const plan = planConnect(flow, patterns, "writer", "reviewer");
  assert.deepEqual(plan, { kind: "pick", source: "writer", target: "reviewer", candidates: [] });
  const picked = planPick(flow, pattern("debate_judge"), "writer", "reviewer");
  assert.equal(picked.kind === "ops" && picked.label, "Connect writer → reviewer (debate_judge)");
  assert.deepEqual(picked.kind === "ops" && picked.ops, [
    {
      op: "addInteraction",
      interaction: {
        patternId: "debate_judge",
        edges: [
          {
            source: "writer",
            target: "reviewer",
            data: {
              termination: { any: [{ type: "max_rounds", rounds: 3 }, { type: "judge_decision" }, { type: "timeout_ms", ms: 600000 }] },
              params: { timeout_ms: 600000 },
            },
          },
        ],
      },
    },
  ]);
  // A node removed while the picker was open: refused, not written.
  const gone: FlowModel = structuredClone(flow);
  gone.agents = gone.agents!.filter((a) => a.id !== "reviewer");
  assert.deepEqual(planPick(gone, pattern("debate_judge"), "writer", "reviewer"), { kind: "refused", message: "There is no node reviewer in this flow." });
  // Every pattern gives a termination, and the params its topology needs (docs/patterns.md).
  for (const id of PATTERN_IDS) {
    const d = edgeData(undefined, pattern(id));
    assert.ok(d.termination && (d.termination.type || d.termination.any || d.termination.all), id);
  }
  assert.deepEqual(edgeData(undefined, pattern("blackboard")).params?.retention, { keep_last_n: 200 });
  assert.equal(edgeData(undefined, pattern("publish_subscribe")).params?.rate_limit_per_min, 10);
  // A pattern the webview does not know (the list has not arrived): still a termination.
  assert.deepEqual(edgeData(undefined, undefined), { termination: { type: "max_rounds", rounds: 3 } });
});

test("a node in exactly one interaction that accepts the edge gets it there, with that interaction's stop rule", () => {
  const plan = planConnect(flow, patterns, "lead", "w2");
  assert.equal(plan.kind, "ops");
  assert.deepEqual(plan.kind === "ops" && plan.ops, [
    {
      op: "addEdge",
      interactionId: "i1",
      edge: {
        source: "lead",
        target: "w2",
        data: {
          termination: { any: [{ type: "max_rounds", rounds: 4 }, { type: "quality_gate", metric: "tests_passed", op: ">=", value: 1 }] },
          // the first edge's params, less its own messages
          params: { test_command: ["npm", "test"] },
        },
      },
    },
  ]);
  // The target's interactions do not count: w2 → lead is a new interaction.
  assert.equal(planConnect(flow, patterns, "w2", "lead").kind, "pick");
});

test("self-loops, duplicates and unknown nodes are refused with a message", () => {
  assert.deepEqual(planConnect(flow, patterns, "lead", "lead"), {
    kind: "refused",
    message: "An edge joins two different nodes; lead cannot be connected to itself.",
  });
  assert.deepEqual(planConnect(flow, patterns, "lead", "w1"), { kind: "refused", message: "Interaction i1 (manager_worker) already has an edge lead → w1." });
  assert.deepEqual(planConnect(flow, patterns, "lead", "w1", "i1"), { kind: "refused", message: "Interaction i1 (manager_worker) already has an edge lead → w1." });
  assert.deepEqual(planConnect(flow, patterns, "lead", "ghost"), { kind: "refused", message: "There is no node ghost in this flow." });
  assert.deepEqual(planConnect(flow, patterns, "lead", "w2", "i9"), { kind: "refused", message: "There is no interaction i9 in this flow." });
  // The same two nodes in a new interaction are not a duplicate.
  assert.equal(planConnect(flow, patterns, "lead", "w1", "new").kind, "pick");
});

test("a two-party interaction takes no third node: the user picks a pattern instead", () => {
  // user's only interaction is a full role_play_pair.
  assert.deepEqual(accepting(flow, patterns, "user", "w2"), []);
  assert.deepEqual(planConnect(flow, patterns, "user", "w2"), { kind: "pick", source: "user", target: "w2", candidates: [] });
  // Chosen explicitly (a selected edge of i2): the picker says why.
  const plan = planConnect(flow, patterns, "user", "w2", "i2");
  assert.equal(plan.kind, "pick");
  assert.match(plan.kind === "pick" ? plan.note! : "", /^Interaction i2 is a role_play_pair, which is between two nodes only \(user and helper\)\. Choose a pattern/);
  // Within the pair, the edge back is fine.
  const back = planConnect(flow, patterns, "helper", "user");
  assert.equal(back.kind === "ops" && back.ops[0].op === "addEdge" && back.ops[0].interactionId, "i2");
});

test("a selected interaction takes the edge even between nodes outside it", () => {
  const plan = planConnect(flow, patterns, "writer", "reviewer", "i1");
  assert.equal(plan.kind, "ops");
  const op = plan.kind === "ops" ? plan.ops[0] : undefined;
  assert.equal(op?.op === "addEdge" && op.interactionId, "i1");
  assert.equal(plan.kind === "ops" && plan.label, "Connect writer → reviewer");
});

test("with several interactions that would take it, the picker offers them", () => {
  const f: FlowModel = structuredClone(flow);
  const i3 = structuredClone(f.interactions![0]);
  i3.id = "i3";
  i3.path = "/interactions/2";
  i3.edges = [{ ...i3.edges![0], id: "i3-e1", source: "lead", target: "judge", path: "/interactions/2/edges/0" }];
  f.interactions!.push(i3);
  const plan = planConnect(f, patterns, "lead", "w2");
  assert.equal(plan.kind, "pick");
  assert.deepEqual(plan.kind === "pick" && plan.candidates.map((i) => i.id), ["i1", "i3"]);
  // One of them already has the edge: it is not offered.
  const dup = planConnect(f, patterns, "lead", "w1");
  assert.deepEqual(dup.kind === "pick" && dup.candidates.map((i) => i.id), ["i3"]);
  assert.deepEqual([...participants(f.interactions![2])], ["lead", "judge"]);
});

test("reconnecting an edge end sets its source or target", () => {
  assert.deepEqual(planReconnect(flow, patterns, "i1-e1", "lead", "w2"), {
    kind: "ops",
    ops: [{ op: "set", path: "/interactions/0/edges/0/target", value: "w2" }],
    label: "Reconnect i1-e1",
  });
  assert.deepEqual(planReconnect(flow, patterns, "i1-e1", "writer", "w1"), {
    kind: "ops",
    ops: [{ op: "set", path: "/interactions/0/edges/0/source", value: "writer" }],
    label: "Reconnect i1-e1",
  });
  assert.deepEqual(planReconnect(flow, patterns, "i1-e1", "lead", "w1"), { kind: "none" });
  assert.deepEqual(planReconnect(flow, patterns, "i1-e1", "w1", "w1"), {
    kind: "refused",
    message: "An edge joins two different nodes; w1 cannot be connected to itself.",
  });
  assert.deepEqual(planReconnect(flow, patterns, "nope", "a", "b"), { kind: "refused", message: "There is no edge nope in this flow." });
  // A pair stays a pair: moving one end to another node is fine, the pair stays two.
  assert.equal(planReconnect(flow, patterns, "i2-e1", "user", "w2").kind, "ops");
  // Onto an edge the interaction has: a duplicate.
  const f: FlowModel = structuredClone(flow);
  f.interactions![0].edges!.push({ id: "i1-e2", source: "lead", target: "w2", data: {}, path: "/interactions/0/edges/1" });
  assert.deepEqual(planReconnect(f, patterns, "i1-e2", "lead", "w1"), { kind: "refused", message: "Interaction i1 (manager_worker) already has an edge lead → w1." });
});

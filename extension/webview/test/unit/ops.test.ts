import assert from "node:assert/strict";
import { test } from "node:test";
import { cleanTermination, defaultCondition, deleteOps, layoutOp, listFromText, moveOps, nudge, parseJSONObject, setOp } from "../../src/ops";
import { matchPattern, roleNames } from "../../src/Palette";
import type { PatternInfo } from "../../../src/canvas/protocol";

test("set ops: empty values delete the key", () => {
  assert.deepEqual(setOp("/agents/0/name", "Ann"), { op: "set", path: "/agents/0/name", value: "Ann" });
  assert.deepEqual(setOp("/agents/0/name", ""), { op: "set", path: "/agents/0/name", value: null });
  assert.deepEqual(setOp("/agents/0/files", []), { op: "set", path: "/agents/0/files", value: null });
  assert.deepEqual(setOp("/x", 0), { op: "set", path: "/x", value: 0 });
  assert.deepEqual(setOp("/x", false), { op: "set", path: "/x", value: false });
});

test("lists and params from text", () => {
  assert.deepEqual(listFromText(" src/a.ts, src/b.ts,,\nsrc/c.ts "), ["src/a.ts", "src/b.ts", "src/c.ts"]);
  assert.deepEqual(listFromText("  "), []);
  assert.deepEqual(parseJSONObject('{"n": 5}'), { ok: true, value: { n: 5 } });
  assert.deepEqual(parseJSONObject(""), { ok: true, value: null });
  assert.equal(parseJSONObject("[1]").ok, false);
  assert.equal(parseJSONObject("{n:").ok, false);
});

test("terminations lose the model's paths and stray fields", () => {
  assert.deepEqual(
    cleanTermination({ any: [{ type: "max_rounds", rounds: 3, path: "/p/any/0", ms: 5 }, { type: "judge_decision", path: "/p/any/1" }], path: "/p" }),
    { any: [{ type: "max_rounds", rounds: 3 }, { type: "judge_decision" }] },
  );
  assert.deepEqual(cleanTermination({ type: "quality_gate", metric: "m", op: "<=", value: 2, rounds: 1 }), { type: "quality_gate", metric: "m", op: "<=", value: 2 });
  assert.deepEqual(defaultCondition("timeout_ms"), { type: "timeout_ms", ms: 600000 });
  assert.deepEqual(defaultCondition("judge_decision"), { type: "judge_decision" });
  // spend limits keep their number when a termination is copied to a new edge
  assert.deepEqual(cleanTermination({ any: [{ type: "max_tokens", tokens: 50000, usd: 1 }, { type: "max_cost_usd", usd: 2.5, path: "/x" }] }), {
    any: [{ type: "max_tokens", tokens: 50000 }, { type: "max_cost_usd", usd: 2.5 }],
  });
  assert.deepEqual(defaultCondition("max_cost_usd"), { type: "max_cost_usd", usd: 5 });
  assert.deepEqual(defaultCondition("max_tokens"), { type: "max_tokens", tokens: 1000000 });
});

test("delete removes nodes and only the edges not already going with them", () => {
  assert.deepEqual(
    deleteOps(
      ["a"],
      [
        { id: "i1-e1", source: "a", target: "b" },
        { id: "i2-e1", source: "b", target: "c" },
      ],
    ),
    [
      { op: "removeNode", id: "a" },
      { op: "removeEdge", edgeId: "i2-e1" },
    ],
  );
  assert.deepEqual(deleteOps([], []), []);
});

// ops go to the host as JSON: compared as they arrive (the positions' record has no prototype)
const sent = (x: unknown) => JSON.parse(JSON.stringify(x));

test("moves: one node is a moveNode, several one setLayout; numbers rounded", () => {
  assert.deepEqual(moveOps({ a: { x: 1.4, y: 2.6 } }), [{ op: "moveNode", id: "a", position: { x: 1, y: 3 } }]);
  assert.deepEqual(sent(moveOps({ a: { x: 1, y: 2 }, b: { x: 3.5, y: 4 } })), [{ op: "setLayout", positions: { a: { x: 1, y: 2 }, b: { x: 4, y: 4 } } }]);
  assert.deepEqual(moveOps({}), []);
  assert.deepEqual(sent(layoutOp({ a: { x: -0.4, y: 10.5 } })), { op: "setLayout", positions: { a: { x: 0, y: 11 } } });
});

test("nudging moves by the step, or to the next grid line when snapping", () => {
  assert.deepEqual({ ...nudge({ a: { x: 10, y: 10 } }, 1, 0) }, { a: { x: 11, y: 10 } });
  assert.deepEqual({ ...nudge({ a: { x: 10, y: 10 } }, 0, -10) }, { a: { x: 10, y: 0 } });
  assert.deepEqual({ ...nudge({ a: { x: 10, y: 10 } }, 1, 0, 16) }, { a: { x: 16, y: 10 } });
  assert.deepEqual({ ...nudge({ a: { x: 16, y: 32 } }, 1, 0, 16) }, { a: { x: 32, y: 32 } });
  assert.deepEqual({ ...nudge({ a: { x: 16, y: 32 } }, 0, -1, 16) }, { a: { x: 16, y: 16 } });
  assert.deepEqual({ ...nudge({ a: { x: 20, y: 20 } }, -1, 0, 16) }, { a: { x: 16, y: 20 } });
});

test("pattern search matches every word against id, name, roles and doc", () => {
  const p: PatternInfo = { id: "P05", patternId: "debate_judge", name: "Debate + Judge", topology: "debate_judge", roles: ["Debater A", "Debater B", "Judge"], doc: "A and B argue; the judge decides (Irving)." };
  const real: PatternInfo = { id: "P01", patternId: "manager_worker", name: "Manager-Worker", topology: "manager_worker", roles: [{ role: "manager", name: "Manager", count: 1 }, { role: "worker", name: "Worker", count: 2 }] };
  assert.equal(roleNames(real), "Manager ×1, Worker ×2");
  assert.ok(matchPattern(real, "worker"));
  assert.ok(matchPattern(p, "p05"));
  assert.ok(matchPattern(p, "judge debater"));
  assert.ok(matchPattern(p, "IRVING"));
  assert.ok(matchPattern(p, ""));
  assert.ok(!matchPattern(p, "judge auction"));
});

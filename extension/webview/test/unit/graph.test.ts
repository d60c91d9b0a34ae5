import assert from "node:assert/strict";
import { test } from "node:test";
import { indexDiagnostics, isPathPrefix, syntaxError, worstSeverity } from "../../src/diagnostics";
import { backendBadge, entryInteraction, findElement, NODE_HEIGHT, NODE_WIDTH, toGraph } from "../../src/graph";
import { moveOps } from "../../src/ops";
import { edgeLabel, formatDuration, keyParameter } from "../../src/labels";
import type { Diagnostic, FlowModel } from "../../../src/canvas/protocol";
import { allPatterns, broken, firstSight, PATTERN_IDS, problems, team13, team20, twentyPatterns, unknownAgent } from "./fixtures";

test("labels show the pattern and its key parameter", () => {
  assert.equal(edgeLabel("debate_judge", { termination: { any: [{ type: "max_rounds", rounds: 3 }, { type: "judge_decision" }] } }), "debate_judge (3r)");
  assert.equal(edgeLabel("contract_net", { termination: { type: "timeout_ms", ms: 600000 } }), "contract_net (10m)");
  assert.equal(edgeLabel("majority_vote", { termination: { type: "consensus_threshold", threshold: 0.6 } }), "majority_vote (≥0.6)");
  assert.equal(
    edgeLabel("fact_check_verifier", { termination: { type: "quality_gate", metric: "citations_count", op: ">=", value: 3 } }),
    "fact_check_verifier (citations_count>=3)",
  );
  assert.equal(edgeLabel("memory_sync", { termination: { type: "judge_decision" } }), "memory_sync (judge)");
  // Rounds win over a timeout in an all: list.
  assert.equal(edgeLabel("bilateral_negotiation", { termination: { all: [{ type: "timeout_ms", ms: 1000 }, { type: "max_rounds", rounds: 5 }] } }), "bilateral_negotiation (5r)");
  // No termination: the params that bound the run, else say so.
  assert.equal(edgeLabel("self_consistency", { params: { n: 5 } }), "self_consistency (n=5)");
  assert.equal(edgeLabel("debate_judge", { params: { timeout_ms: 90000 } }), "debate_judge (90s)");
  assert.equal(edgeLabel("p2p", {}), "p2p (no termination)");
  assert.equal(edgeLabel("debate_judge", { termination: { type: "max_rounds" } }), "debate_judge (max_rounds?)");
  assert.equal(keyParameter(undefined), undefined);
  // a spend limit labels an edge when nothing says more about how long it runs
  assert.equal(edgeLabel("role_play_pair", { termination: { any: [{ type: "max_tokens", tokens: 250000 }, { type: "max_cost_usd", usd: 2 }] } }), "role_play_pair (250k tok)");
  assert.equal(edgeLabel("role_play_pair", { termination: { type: "max_cost_usd", usd: 2 } }), "role_play_pair ($2)");
  assert.deepEqual([formatDuration(500), formatDuration(1500), formatDuration(7_200_000), formatDuration(-1)], ["500ms", "1.5s", "2h", "?"]);
});

test("a flow using all 20 patterns maps to nodes and labelled edges", () => {
  const flow = allPatterns.flow!;
  const g = toGraph(flow, allPatterns.diagnostics);
  assert.equal(g.nodes.length, flow.agents!.length + flow.systemNodes!.length);
  assert.deepEqual([...new Set(g.edges.map((e) => e.data!.patternId))].sort(), [...PATTERN_IDS].sort());
  const edgeCount = flow.interactions!.reduce((n, i) => n + (i.edges ?? []).length, 0);
  assert.equal(g.edges.length, edgeCount);
  // Every edge joins two nodes that are drawn, and is labelled `patternId (key)`.
  const ids = new Set(g.nodes.map((n) => n.id));
  for (const e of g.edges) {
    assert.ok(ids.has(e.source) && ids.has(e.target), e.id);
    assert.match(e.data!.label, new RegExp(`^${e.data!.patternId} \\(.+\\)$`));
  }
  assert.equal(g.edges.find((e) => e.data!.patternId === "debate_judge")!.data!.label, "debate_judge (3r)");
  assert.equal(g.edges.find((e) => e.data!.patternId === "blackboard")!.data!.label, "blackboard (15m)");
  assert.equal(g.edges.find((e) => e.data!.patternId === "self_consistency")!.data!.label, "self_consistency (n=5)");
  // Agents carry name, role and backend; system nodes their type.
  const coder = g.nodes.find((n) => n.id === "coder")!;
  assert.equal(coder.type, "agent");
  assert.equal(coder.data.kind === "agent" && coder.data.backend, "codex");
  assert.equal(coder.data.kind === "agent" && coder.data.role, "coder");
  assert.equal(g.nodes.find((n) => n.id === "planner")!.data.kind === "agent" && (g.nodes.find((n) => n.id === "planner")!.data as { backend: string }).backend, "auto");
  const sysTypes = new Set(g.nodes.filter((n) => n.type === "system").map((n) => (n.data as { sysType: string }).sysType));
  assert.deepEqual([...sysTypes].sort(), ["aggregator", "blackboard", "bridge", "broker", "curator", "judge", "manager", "router"]);
  assert.match(coder.ariaLabel!, /Agent Coder, role coder, backend codex/);
});

test("saved positions are used; the rest are laid out by roles below them, without overlap", () => {
  const g = toGraph(allPatterns.flow!, []);
  assert.deepEqual(g.nodes.find((n) => n.id === "w1")!.position, { x: 300, y: -60 });
  assert.deepEqual(g.nodes.find((n) => n.id === "mgr")!.position, { x: 0, y: 0 });
  assert.equal(g.nodes.find((n) => n.id === "mgr")!.data.auto, undefined);
  const free = g.nodes.filter((n) => !["mgr", "w1", "w2"].includes(n.id));
  for (const n of free) {
    assert.equal(n.data.auto, true, n.id);
    assert.ok(n.position.y >= 60 + NODE_HEIGHT, `${n.id} is below the laid-out nodes`);
  }
  for (let i = 0; i < free.length; i++)
    for (let j = i + 1; j < free.length; j++) {
      const a = free[i].position;
      const b = free[j].position;
      assert.ok(Math.abs(a.x - b.x) >= NODE_WIDTH || Math.abs(a.y - b.y) >= NODE_HEIGHT, `${free[i].id} overlaps ${free[j].id}`);
    }
  // debaters before their judge
  const x = (id: string) => g.nodes.find((n) => n.id === id)!.position.x;
  assert.ok(x("debater_a") + NODE_WIDTH < x("judge") && x("debater_b") + NODE_WIDTH < x("judge"));
});

test("edges carry their interaction's colour index and their place among parallel edges", () => {
  const g = toGraph(team20.flow!, []);
  const e = (id: string) => g.edges.find((x) => x.id === id)!.data!;
  const contract = team20.flow!.interactions!.findIndex((i) => i.id === "contract");
  assert.deepEqual([e("contract-e1").interactionIndex, e("contract-e2").interactionIndex], [contract, contract]);
  // fe_lead → be_lead and back: one pair, two edges
  assert.deepEqual([e("contract-e1").parallel, e("contract-e2").parallel, e("contract-e1").parallelCount], [0, 1, 2]);
  assert.deepEqual([e("build-e1").parallel, e("build-e1").parallelCount], [0, 1]);
  const coder = firstSight.flow!.agents!.find((a) => a.id === "coder")!;
  assert.equal((toGraph(firstSight.flow!, []).nodes.find((n) => n.id === "coder")!.data as { files: number }).files, coder.files!.length);
});

test("an edge naming a node the flow does not define is drawn to a placeholder, with its problem; duplicate ids are drawn once", () => {
  const flow: FlowModel = {
    file: "f.yaml",
    name: "f",
    agents: [
      { id: "a", path: "/agents/0" },
      { id: "a", path: "/agents/1" },
    ],
    systemNodes: null,
    interactions: [{ id: "i1", patternId: "p2p", path: "/interactions/0", edges: [{ id: "i1-e1", source: "a", target: "ghost", data: {}, path: "/interactions/0/edges/0" }] }],
    layout: { nodes: null, edges: null },
    spans: null,
  };
  const g = toGraph(flow, []);
  assert.deepEqual(g.nodes.map((n) => [n.id, n.type]), [["a", "agent"], ["missing:ghost", "missing"]]);
  assert.deepEqual(g.edges.map((e) => [e.id, e.source, e.target]), [["i1-e1", "a", "missing:ghost"]]);
  assert.equal(backendBadge({ id: "x", path: "" }), "auto");
  // the real loader's reading of a misspelt worker: the edge, its error, and a placeholder named as the edge names it
  const u = toGraph(unknownAgent.flow!, unknownAgent.diagnostics);
  const ghost = u.nodes.find((n) => n.id === "missing:tester2")!;
  assert.equal(ghost.data.kind, "missing");
  assert.equal(ghost.data.kind === "missing" && ghost.data.name, "tester2");
  assert.equal(ghost.draggable, false);
  assert.match(ghost.data.diagnostics[0].message, /did you mean "tester"/);
  const e2 = u.edges.find((e) => e.id === "build-e2")!;
  assert.equal(e2.target, "missing:tester2");
  assert.equal(e2.data!.severity, "error");
  assert.match(e2.ariaLabel!, /1 problem/);
  // laid out with its part, not on top of another card
  const pos = (id: string) => u.nodes.find((n) => n.id === id)!.position;
  assert.notDeepEqual(pos("missing:tester2"), pos("coder"));
});

test("one label per fan: an interaction's edges out of one node share a label by it; a fan in by the node it enters; a few nodes' edges one", () => {
  const g = toGraph(team13.flow!, []);
  const groups = new Map<string, string[]>();
  for (const e of g.edges) groups.set(e.data!.labelledBy, [...(groups.get(e.data!.labelledBy) ?? []), e.id]);
  const at = (id: string) => g.edges.find((e) => e.id === id)!.data!;
  // the auction: three bidders, one label by the auctioneer
  assert.deepEqual(groups.get("auction-e1"), ["auction-e1", "auction-e2", "auction-e3"]);
  assert.equal(at("auction-e1").labelNode, "auctioneer");
  assert.deepEqual(at("auction-e1").labelEdges, ["auction-e1", "auction-e2", "auction-e3"]);
  // the lead's three workers: one, by the lead
  assert.deepEqual(groups.get("build-e1"), ["build-e1", "build-e2", "build-e3"]);
  assert.equal(at("build-e1").labelNode, "lead");
  // four writers to the board, each its only edge: one label, by the board
  assert.deepEqual(groups.get("notes-e1"), ["notes-e1", "notes-e2", "notes-e3", "notes-e4"]);
  assert.equal(at("notes-e1").labelNode, "board");
  // the debate, three nodes: one label for its four edges, by a debater (each touches three)
  assert.deepEqual(groups.get("design-e1"), ["design-e1", "design-e2", "design-e3", "design-e4"]);
  assert.equal(at("design-e1").labelNode, "pro");
  assert.equal(groups.size, 4);
  // a run's line (round, time left) on the interaction's first label only, not on each fan
  assert.deepEqual(g.edges.filter((e) => e.data!.runLine).map((e) => e.id), ["design-e1", "auction-e1", "build-e1", "notes-e1"]);
  // a pair both ways: one label between them
  const pair = toGraph(team20.flow!, []);
  const c1 = pair.edges.find((e) => e.id === "contract-e1")!.data!;
  assert.equal(c1.labelNode, undefined);
  assert.deepEqual(c1.labelEdges, ["contract-e1", "contract-e2"]);
  // a larger interaction: a fan out of each node, lone edges alone (a chain of four, two fans)
  const big = toGraph(twentyPatterns.flow!, []);
  const news = big.edges.filter((e) => e.data!.interactionId === "release_news");
  assert.deepEqual(news.map((e) => e.data!.labelledBy), ["release_news-e1", "release_news-e2", "release_news-e2", "release_news-e2"]);
  assert.equal(news[1].data!.labelNode, "news_hub");
  assert.equal(news[0].data!.labelNode, undefined);
  assert.equal(entryInteraction(team13.flow), "design", "the run starts with the first interaction that waits for none");
  const [, auction, , notes] = team13.flow!.interactions!;
  assert.equal(entryInteraction({ ...team13.flow!, interactions: [auction, { ...notes, dependsOn: [] }] }), "notes");
  assert.equal(entryInteraction({ ...team13.flow!, interactions: [auction, notes] }), "auction", "none free (a cycle, or a missing one): the first");
});

test("diagnostics go to the node or edge their path names", () => {
  const idx = indexDiagnostics(problems.flow, problems.diagnostics);
  const codes = (ds: Diagnostic[] | undefined) => (ds ?? []).map((d) => d.path);
  assert.deepEqual(codes(idx.nodes.get("a1")), ["/agents/0/colour"]);
  assert.deepEqual(codes(idx.nodes.get("a2")), ["/agents/1/runtime/maxTurns"]);
  assert.deepEqual(codes(idx.edges.get("i1-e1")), ["/interactions/0/edges/0/data/termination/rounds"]);
  assert.deepEqual(codes(idx.edges.get("i1-e2")), ["/interactions/0/edges/1/data/wibble"]);
  assert.deepEqual(codes(idx.flow), ["/unknownTop"]);
  assert.equal(worstSeverity(idx.nodes.get("a2")), "error");
  assert.equal(worstSeverity(idx.nodes.get("a1")), "warning");
  // Drawn on the graph.
  const g = toGraph(problems.flow!, problems.diagnostics);
  assert.equal(g.nodes.find((n) => n.id === "a2")!.data.severity, "error");
  assert.equal(g.edges.find((e) => e.id === "i1-e1")!.data!.severity, "error");
  assert.equal(g.nodes.find((n) => n.id === "j")!.data.severity, undefined);
});

test("a diagnostic on an interaction marks all its edges; one on a layout entry marks its node", () => {
  const mk = (path: string): Diagnostic => ({ file: "f", range: problems.diagnostics[0].range, severity: "error", code: "x", message: path, path });
  const idx = indexDiagnostics(problems.flow, [mk("/interactions/0/patternId"), mk("/layout/nodes/j"), mk("/agents/10"), mk("")]);
  assert.equal(idx.edges.get("i1-e1")!.length, 1);
  assert.equal(idx.edges.get("i1-e2")!.length, 1);
  assert.equal(idx.nodes.get("j")!.length, 1);
  assert.equal(idx.flow.length, 2);
  assert.ok(isPathPrefix("/agents/1", "/agents/1/name"));
  assert.ok(!isPathPrefix("/agents/1", "/agents/10"));
});

test("a YAML syntax error is recognised; a flow with warnings is not one", () => {
  assert.equal(syntaxError(broken.flow, broken.diagnostics)?.code, "yaml-syntax");
  assert.equal(syntaxError(problems.flow, problems.diagnostics), undefined);
  assert.equal(syntaxError(null, [])?.code, "yaml-syntax");
});

test("findElement finds the inspected element in the current model", () => {
  const flow = allPatterns.flow!;
  assert.equal(findElement(flow, { kind: "node", id: "judge" })?.kind, "system");
  assert.equal(findElement(flow, { kind: "node", id: "coder" })?.kind, "agent");
  const e = findElement(flow, { kind: "edge", id: "i5-e2" });
  assert.equal(e?.kind === "edge" && e.interaction.patternId, "debate_judge");
  assert.equal(findElement(flow, { kind: "node", id: "nobody" }), undefined);
  assert.equal(findElement(null, { kind: "node", id: "coder" }), undefined);
});

test("a node's badge is its backend as resolved: a command judge is command, an engine-run system node has none", () => {
  assert.equal(backendBadge({ id: "j", type: "judge", path: "/systemNodes/0", runtime: { kind: "cli", backendId: "command", command: ["python3", "judge.py"] } }), "command");
  assert.equal(backendBadge({ id: "j", type: "judge", path: "/systemNodes/0", runtime: { kind: "cli" } }), "auto");
  assert.equal(backendBadge({ id: "b", type: "blackboard", path: "/systemNodes/1" }), undefined);
  assert.equal(backendBadge({ id: "a", path: "/agents/0" }), "auto");
  const g = toGraph(allPatterns.flow!, []);
  for (const n of g.nodes) if (n.data.kind === "system") assert.equal(n.data.backend, n.data.node.runtime ? n.data.node.runtime.backendId || "auto" : undefined, n.id);
});

test("ids are ids: agents named constructor, toString and __proto__ are laid out, placed and written like any other", () => {
  const ids = ["constructor", "toString", "__proto__"];
  const flow: FlowModel = {
    file: "f.yaml",
    name: "f",
    agents: ids.map((id, i) => ({ id, role: i === 0 ? "manager" : "worker", path: `/agents/${i}` })),
    systemNodes: null,
    interactions: [{ id: "hasOwnProperty", patternId: "manager_worker", path: "/interactions/0", edges: ["toString", "__proto__"].map((t, i) => ({ id: `e${i}`, source: "constructor", target: t, data: { termination: { type: "max_rounds", rounds: 1 } }, path: `/interactions/0/edges/${i}` })) }],
    layout: { nodes: null, edges: null },
    spans: null,
  };
  const g = toGraph(flow, []);
  for (const n of g.nodes) {
    assert.equal(typeof n.position.x, "number", `${n.id} has a position`);
    assert.equal(n.data.auto, true, `${n.id} is laid out, not "saved"`);
  }
  assert.notDeepEqual(g.nodes[1].position, g.nodes[2].position, "two workers in two places");
  assert.equal(g.edges.length, 2);
  // the first move writes every one of them (setLayout), "__proto__" a key like the others
  const op = moveOps(Object.fromEntries(g.nodes.map((n) => [n.id, n.position])))[0];
  assert.equal(op.op, "setLayout");
  assert.deepEqual(Object.keys(op.op === "setLayout" ? op.positions : {}).sort(), [...ids].sort());
});

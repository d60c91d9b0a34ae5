// The benchmark's flow (npm run bench:webview; the browser tests use a smaller one): a
// deterministic pseudo-random flow, agents on a grid, edges mostly between near neighbours.
import type { FlowModel, Interaction } from "../../../src/canvas/protocol";

const DEFAULT_AGENTS = Number(process.env.BENCH_AGENTS ?? 500);
const DEFAULT_EDGES = Number(process.env.BENCH_EDGES ?? 1000);
const PATTERNS = ["manager_worker", "debate_judge", "chat_chain_pipeline", "majority_vote", "blackboard", "router_targeted"];

/** bigFlow is the benchmarks' flow (the browser tests use a smaller one), with or without saved positions. */
export function bigFlow(withLayout = true, agentCount = DEFAULT_AGENTS, edgeCount = DEFAULT_EDGES): FlowModel {
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const agents = Array.from({ length: agentCount }, (_, i) => ({
    id: `a${i}`,
    name: `Agent ${i}`,
    role: i % 10 === 0 ? "manager" : "worker",
    runtime: { kind: "cli", backendId: ["claude", "codex", "gemini", "auto"][i % 4] },
    path: `/agents/${i}`,
  }));
  const cols = Math.ceil(Math.sqrt(agentCount));
  const nodes: Record<string, { x: number; y: number }> = {};
  agents.forEach((a, i) => (nodes[a.id] = { x: (i % cols) * 260, y: Math.floor(i / cols) * 140 }));
  const interactions: Interaction[] = [];
  const perInteraction = 4;
  for (let e = 0; e < edgeCount; e++) {
    const k = Math.floor(e / perInteraction);
    if (!interactions[k]) interactions[k] = { id: `i${k + 1}`, patternId: PATTERNS[k % PATTERNS.length], edges: [], path: `/interactions/${k}` };
    const s = Math.floor(rnd() * agentCount);
    let t = s + 1 + Math.floor(rnd() * cols * 2);
    if (t >= agentCount) t = Math.floor(rnd() * agentCount);
    if (t === s) t = (s + 1) % agentCount;
    const j = interactions[k].edges!.length;
    interactions[k].edges!.push({
      id: `i${k + 1}-e${j + 1}`,
      source: `a${s}`,
      target: `a${t}`,
      data: { termination: { type: "max_rounds", rounds: 1 + (e % 5) } },
      path: `/interactions/${k}/edges/${j}`,
    });
  }
  return { file: "big.yaml", name: "big", agents, systemNodes: [], interactions, layout: { nodes: withLayout ? nodes : {}, edges: {} }, spans: {} };
}


// What an agent's role (or a system node's type) means for the picture: where it goes in a
// layered layout, and the codicon its card shows. Roles are free text in a flow; they are read
// word by word, so "sub_manager" leads like "manager" and "qa-worker" follows like "worker".

/**
 * Layout ranks, lowest first: an edge between two nodes of different ranks is laid out from the
 * lower rank to the higher, whichever way it was drawn; between equal ranks it keeps its own
 * direction. Orchestrators, managers, routers, brokers and requesters lead; workers, bidders and
 * subscribers follow; judges and the nodes that gather results (aggregators, curators) come last,
 * so debaters stand before their judge.
 */
export const RANK = { lead: 0, other: 1, follower: 2, last: 3 } as const;

const LEAD = new Set(["orchestrator", "manager", "supervisor", "coordinator", "lead", "root", "router", "broker", "requester", "planner", "pm", "publisher", "user"]);
const FOLLOWER = new Set(["worker", "bidder", "subscriber", "provider", "executor"]);
const LAST = new Set(["judge", "aggregator", "tiebreak", "curator"]);

/** roleWords splits a role into lowercase words: "subManager", "sub_manager", "sub-manager" → sub, manager. */
export function roleWords(role: string): string[] {
  return role
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** roleRank is where a role stands in a layered layout (RANK). */
export function roleRank(role: string): number {
  const words = roleWords(role);
  if (words.some((w) => LEAD.has(w))) return RANK.lead;
  if (words.some((w) => LAST.has(w))) return RANK.last;
  if (words.some((w) => FOLLOWER.has(w))) return RANK.follower;
  return RANK.other;
}

// The codicon for a role, by its first word that has one; an agent with none is a robot.
const ICONS: Record<string, string> = {
  orchestrator: "organization",
  manager: "organization",
  supervisor: "organization",
  coordinator: "organization",
  lead: "organization",
  root: "organization",
  pm: "organization",
  planner: "checklist",
  architect: "symbol-structure",
  designer: "symbol-color",
  worker: "tools",
  executor: "tools",
  engineer: "tools",
  coder: "code",
  developer: "code",
  tester: "beaker",
  qa: "beaker",
  reviewer: "eye",
  observer: "eye",
  critic: "comment",
  refiner: "sparkle",
  verifier: "verified",
  judge: "law",
  debater: "comment-discussion",
  proposer: "comment-discussion",
  responder: "comment-discussion",
  red: "bug",
  defender: "shield",
  voter: "thumbsup",
  sampler: "symbol-numeric",
  bidder: "tag",
  publisher: "broadcast",
  subscriber: "rss",
  requester: "send",
  provider: "server-process",
  producer: "edit",
  writer: "edit",
  doc: "book",
  knowledge: "book",
  researcher: "search",
  reflector: "mirror",
  member: "person",
  peer: "person",
  user: "account",
  assistant: "hubot",
  local: "plug",
};

/** roleIcon is the codicon name (without "codicon-") for an agent's role. */
export function roleIcon(role: string): string {
  for (const w of roleWords(role)) if (ICONS[w]) return ICONS[w];
  return "hubot";
}

// The agentcanvas/* JSON-RPC surface as the extension uses it: method names (contract, docs/design.md)
// and the parameter/result shapes, as sidecar/server (server branch, services.go) defines them.
// The pending-request payloads of run events are the extension's proposal until the run engine
// lands; they are kept in this one file so that an adjustment touches nothing else. Readers of results are tolerant (optional fields, both a bare
// array and {items: []}) because the sidecar and the extension are released together but built by
// different people.

import { readAgentTotal, readSpend, type AgentSpend, type Spend } from './canvas/spend';

export type { Spend };

export const Method = {
  listPatterns: 'agentcanvas/listPatterns',
  loadFlow: 'agentcanvas/loadFlow',
  editFlow: 'agentcanvas/editFlow',
  validateFlow: 'agentcanvas/validateFlow',
  instantiatePattern: 'agentcanvas/instantiatePattern',
  prepareSandbox: 'agentcanvas/prepareSandbox',
  createProposal: 'agentcanvas/createProposal',
  listProposals: 'agentcanvas/listProposals',
  getProposal: 'agentcanvas/getProposal',
  applyProposal: 'agentcanvas/applyProposal',
  rejectProposal: 'agentcanvas/rejectProposal',
  revertProposal: 'agentcanvas/revertProposal',
  lineOrigins: 'agentcanvas/lineOrigins',
  startRun: 'agentcanvas/startRun',
  stopRun: 'agentcanvas/stopRun',
  listRuns: 'agentcanvas/listRuns',
  answerQuestion: 'agentcanvas/answerQuestion',
  provideDependency: 'agentcanvas/provideDependency',
  checkDependencyValue: 'agentcanvas/checkDependencyValue',
  rejectDependency: 'agentcanvas/rejectDependency',
  queryLogs: 'agentcanvas/queryLogs',
  getReviewComments: 'agentcanvas/getReviewComments',
  addReviewComment: 'agentcanvas/addReviewComment',
  deleteReviewComment: 'agentcanvas/deleteReviewComment',
  markHunksReviewed: 'agentcanvas/markHunksReviewed',
  requestChanges: 'agentcanvas/requestChanges',
  getInterdiff: 'agentcanvas/getInterdiff',
  forkRun: 'agentcanvas/forkRun',
  getProposalSides: 'agentcanvas/getProposalSides',
} as const;

export const Notification = {
  runEvent: 'agentcanvas/runEvent',
  proposalChanged: 'agentcanvas/proposalChanged',
  flowChanged: 'agentcanvas/flowChanged',
  status: 'agentcanvas/status',
} as const;

// ---- status -------------------------------------------------------------------------------

export type Health = 'ok' | 'warning' | 'error';

export interface RunningFlow {
  runId: string;
  flow: string;
}

export interface StatusParams {
  health: Health;
  message?: string;
  runningFlows?: RunningFlow[];
  pendingRequests?: number;
  version?: string;
}

/** Reads an agentcanvas/status notification; anything malformed becomes a warning, never a throw. */
export function readStatus(raw: unknown): StatusParams {
  const o = asObject(raw);
  const h = o.health;
  const health: Health = h === 'ok' || h === 'warning' || h === 'error' ? h : 'warning';
  // The server sends flow names; objects {runId, flow} are accepted too.
  const runningFlows = asArray(o.runningFlows).flatMap((r): RunningFlow[] => {
    if (typeof r === 'string') return [{ runId: '', flow: r }];
    const x = asObject(r);
    return typeof x.runId === 'string' || typeof x.flow === 'string' ? [{ runId: String(x.runId ?? ''), flow: String(x.flow ?? '') }] : [];
  });
  return {
    health,
    message: typeof o.message === 'string' && o.message !== '' ? o.message : h === health ? undefined : `unknown health ${JSON.stringify(h)}`,
    version: typeof o.version === 'string' ? o.version : undefined,
    runningFlows,
    pendingRequests: typeof o.pendingRequests === 'number' ? o.pendingRequests : undefined,
  };
}

// ---- flows and patterns ---------------------------------------------------------------------

export interface PatternInfo {
  id: string; // "P05"
  patternId: string; // "debate_judge"
  name: string;
  topology?: string;
  roles?: string[];
}

export function readPatterns(raw: unknown): PatternInfo[] {
  const list = Array.isArray(raw) ? raw : asArray(asObject(raw).patterns);
  return list
    .map((p) => asObject(p))
    .filter((p) => typeof p.id === 'string' && typeof p.patternId === 'string')
    .map((p) => ({
      id: String(p.id),
      patternId: String(p.patternId),
      name: typeof p.name === 'string' ? p.name : String(p.patternId),
      topology: typeof p.topology === 'string' ? p.topology : undefined,
      // roles are names, or {role, name, kind…} objects (sidecar/pattern)
      roles: asArray(p.roles).flatMap((r) => (typeof r === 'string' ? [r] : typeof asObject(r).role === 'string' ? [String(asObject(r).name ?? asObject(r).role)] : [])),
    }));
}

/** A 0-based LSP range and TextEdit, as the sidecar sends them. */
export interface LspPosition {
  line: number;
  character: number;
}
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}
export interface LspTextEdit {
  range: LspRange;
  newText: string;
}

export interface EditFlowParams {
  uri: string;
  text: string;
  ops: Array<Record<string, unknown>>;
}

export function readTextEdits(raw: unknown): LspTextEdit[] {
  const list = Array.isArray(raw) ? raw : asArray(asObject(raw).edits);
  return list.map((e) => asObject(e)).filter((e) => typeof e.newText === 'string' && e.range) as unknown as LspTextEdit[];
}

export interface InstantiatePatternParams {
  patternId: string;
  name: string;
}

export interface ValidateFlowParams {
  uri: string;
  text?: string;
}

export interface FlowDiagnostic {
  range: LspRange;
  severity: 1 | 2 | 3 | 4; // LSP DiagnosticSeverity
  code?: string;
  message: string;
  source?: string;
}

export function readDiagnostics(raw: unknown): FlowDiagnostic[] {
  const list = Array.isArray(raw) ? raw : asArray(asObject(raw).diagnostics);
  return list
    .map((d) => asObject(d))
    .filter((d) => typeof d.message === 'string' && d.range)
    .map((d) => ({
      range: d.range as LspRange,
      severity: d.severity === 2 || d.severity === 3 || d.severity === 4 ? d.severity : 1,
      code: typeof d.code === 'string' ? d.code : undefined,
      message: String(d.message),
      source: typeof d.source === 'string' ? d.source : 'agentcanvas',
    }));
}

// ---- runs -----------------------------------------------------------------------------------

export const Backends = ['auto', 'claude', 'codex', 'gemini', 'command', 'dry-run'] as const;
export type Backend = (typeof Backends)[number];

export interface StartRunParams {
  uri?: string; // the flow file (not with skill)
  dryRun?: boolean;
  /** Values for the environment-variable names the flow lists, from SecretStorage (never logged). */
  env?: Record<string, string>;
  /** Overrides every agent's backendId (extension proposal; dryRun covers "dry-run"). */
  backend?: Backend;
  /** Instead of a flow: a person invokes a skill of .agentcanvas/skills/ (one agent follows its SKILL.md). */
  skill?: { name: string; arguments?: string; files?: string[] };
}

/**
 * startRun's parameters for Invoke Skill: the request trimmed (empty: the skill's instructions
 * alone), workspace-relative files with forward slashes, no duplicates.
 */
export function skillRunParams(name: string, request: string, files: readonly string[], backend: Backend): StartRunParams {
  const rel = [...new Set(files.map((f) => f.replace(/\\/g, '/')))];
  const args = request.trim();
  return {
    skill: { name, ...(args ? { arguments: args } : {}), ...(rel.length > 0 ? { files: rel } : {}) },
    backend,
    ...(backend === 'dry-run' ? { dryRun: true } : {}),
  };
}

export interface AgentState {
  id: string;
  role?: string;
  status: string; // pending | running | waiting | finished | failed | stopped
  terminationReason?: string;
  /** what it spent so far: listRuns' total (the run's checkpoint), then the spend events' */
  spend?: AgentSpend;
}

export interface InteractionState {
  id: string;
  patternId?: string;
  status: string;
  terminationReason?: string;
  round?: number;
  /** what its agents reported spending so far */
  spend?: Spend;
  agents: AgentState[];
}

export type PendingRequest = PendingQuestion | PendingDependency;

export interface QuestionFields {
  category?: string;
  question: string;
  options?: string[];
  default?: string;
  required?: boolean;
}

export interface DependencyFields {
  type: DependencyType;
  name: string;
  description?: string;
  required?: boolean;
  default?: string;
}

export type DependencyType = 'api_key' | 'env_variable' | 'service' | 'file' | 'permission' | 'package';
export const DependencyTypes: readonly DependencyType[] = ['api_key', 'env_variable', 'service', 'file', 'permission', 'package'];

interface PendingBase {
  runId: string;
  requestId: string;
  agentId?: string;
  flow?: string;
  /** Absolute deadline in ms since the epoch, when the sidecar gave one. */
  deadline?: number;
}
export interface PendingQuestion extends PendingBase {
  kind: 'question';
  question: QuestionFields;
}
export interface PendingDependency extends PendingBase {
  kind: 'dependency';
  dependency: DependencyFields;
}

export interface RunState {
  runId: string;
  flow: string;
  /** The flow file's path as the sidecar ran it (absolute, or workspace-relative). */
  flowFile?: string;
  status: string; // running | waiting | completed | failed | stopped | interrupted
  dryRun?: boolean;
  startedAt?: string;
  /** When the run's last checkpoint was written (interrupted runs: where it stopped). */
  updatedAt?: string;
  endedAt?: string;
  terminationReason?: string;
  /** what the run's agents reported spending so far (docs/runs.md, "Spend limits") */
  spend?: Spend;
  interactions: InteractionState[];
  pending: PendingRequest[];
  /** a fork: the run and turn it left from (docs/runs.md, "Forks") */
  forkOf?: ForkOrigin;
  /** Resume Run can go on with it: interrupted, or stopped by the person (listRuns). */
  resumable?: boolean;
}

/** Where a fork left its parent run: the end of turn `turn` (the transcript's numbering). */
export interface ForkOrigin {
  runId: string;
  turn: number;
}

/** Reads listRuns' and run_started's forkOf; undefined when it is not one. */
export function readForkOrigin(raw: unknown): ForkOrigin | undefined {
  const o = asObject(raw);
  return typeof o.runId === 'string' && typeof o.turn === 'number' ? { runId: o.runId, turn: o.turn } : undefined;
}

function readAgent(raw: unknown): AgentState {
  const a = asObject(raw);
  return {
    id: String(a.id ?? a.agentId ?? '?'),
    role: typeof a.role === 'string' ? a.role : undefined,
    status: typeof a.status === 'string' ? a.status : 'unknown',
    terminationReason: typeof a.terminationReason === 'string' ? a.terminationReason : undefined,
  };
}

function readInteraction(raw: unknown): InteractionState {
  const i = asObject(raw);
  return {
    id: String(i.id ?? i.interactionId ?? '?'),
    patternId: typeof i.patternId === 'string' ? i.patternId : undefined,
    status: typeof i.status === 'string' ? i.status : 'unknown',
    terminationReason: typeof i.terminationReason === 'string' ? i.terminationReason : typeof i.reason === 'string' && i.reason !== '' ? i.reason : undefined,
    round: typeof i.round === 'number' ? i.round : typeof i.rounds === 'number' ? i.rounds : undefined,
    spend: readSpend(i.spend),
    agents: asArray(i.agents).map(readAgent),
  };
}

/**
 * The run events that ask a person something and wait: the engine sends each once the request
 * can take its answer (data: {agent, id, fields, deadline?}).
 */
export const REQUEST_EVENTS: readonly string[] = ['question_asked', 'dependency_requested', 'phase_completed', 'recovery_asked'];

/** The events after which a request is answered, whoever answered it. */
export const RESOLVED_EVENTS: readonly string[] = ['question_answered', 'dependency_provided', 'dependency_resolved', 'phase_resolved', 'recovery_resolved'];

/**
 * Reads a pending request from listRuns or from a runEvent (one of REQUEST_EVENTS). Returns
 * undefined for anything that is not a well-formed request, so a malformed event can never
 * raise a prompt with missing text.
 */
export function readPending(raw: unknown, runIdFallback?: string): PendingRequest | undefined {
  // A run event carries its payload in "data"; listRuns' pending entries are flat. Merge both.
  const outer = asObject(raw);
  const o: Record<string, unknown> = { ...asObject(outer.data), ...outer };
  const runId = typeof o.runId === 'string' ? o.runId : runIdFallback;
  const requestId = [o.requestId, o.questionId, o.id].find((x): x is string => typeof x === 'string' && x !== '');
  if (!runId || !requestId) return undefined;
  const base: PendingBase = {
    runId,
    requestId,
    agentId: typeof o.agentId === 'string' ? o.agentId : typeof o.agent === 'string' ? o.agent : undefined,
    flow: typeof o.flow === 'string' ? o.flow : undefined,
    deadline: readDeadline(o),
  };
  const kind = o.kind ?? o.event;
  // The block's fields: {fields: {…}} (the engine's Request), {question: {…}} / {dependency: {…}},
  // or flat beside the ids.
  const fields = o.fields && typeof o.fields === 'object' ? asObject(o.fields) : undefined;
  if (kind === 'phase_complete' || kind === 'phase_completed') {
    // The agent finished a phase and waits for approval to go on (stdout protocol §3).
    const f = fields ?? o;
    const phase = f.phase ?? f.number ?? f.name ?? f.N;
    return {
      ...base,
      kind: 'question',
      question: {
        category: 'confirmation',
        question: `Phase ${phase === undefined ? '' : `${String(phase)} `}complete${typeof f.summary === 'string' ? `: ${f.summary}` : ''}.${verificationNote(f.verification)} Continue?`,
        options: ['Continue', 'Stop'],
        default: 'Continue',
        required: true,
      },
    };
  }
  if (kind === 'error' || kind === 'recovery_asked') {
    // An agent's [ERROR] with recovery notify_user: the person chooses retry, skip or stop,
    // answered through answerQuestion like any question.
    const f = fields ?? o;
    const message = typeof f.message === 'string' && f.message.trim() !== '' ? f.message : 'an error';
    const details = typeof f.details === 'string' && f.details.trim() !== '' ? ` (${f.details})` : '';
    return {
      ...base,
      kind: 'question',
      question: {
        category: 'error',
        question: `${base.agentId ?? 'An agent'} reported an error: ${message}${details}. Retry, skip it, or stop the agent?`,
        options: ['retry', 'skip', 'stop'],
        required: true,
      },
    };
  }
  if (kind === 'question' || kind === 'question_asked' || (o.question && typeof o.question === 'object')) {
    const q = fields ?? (o.question && typeof o.question === 'object' ? asObject(o.question) : o);
    if (typeof q.question !== 'string' || q.question.trim() === '') return undefined;
    return {
      ...base,
      kind: 'question',
      question: {
        category: typeof q.category === 'string' ? q.category : undefined,
        question: q.question,
        options: (typeof q.options === 'string' ? q.options.split('\n') : asArray(q.options)).filter((x): x is string => typeof x === 'string' && x.trim() !== ''),
        default: typeof q.default === 'string' ? q.default : undefined,
        required: q.required === undefined ? true : q.required === true || q.required === 'true',
      },
    };
  }
  if (kind === 'dependency' || kind === 'dependency_requested' || (o.dependency && typeof o.dependency === 'object')) {
    const d = fields ?? (o.dependency && typeof o.dependency === 'object' ? asObject(o.dependency) : o);
    if (typeof d.name !== 'string' || d.name === '' || !DependencyTypes.includes(d.type as DependencyType)) return undefined;
    return {
      ...base,
      kind: 'dependency',
      dependency: {
        type: d.type as DependencyType,
        name: d.name,
        description: typeof d.description === 'string' ? d.description : undefined,
        required: d.required === undefined ? true : d.required === true || d.required === 'true',
        default: typeof d.default === 'string' ? d.default : undefined,
      },
    };
  }
  return undefined;
}

/** What a phase's verification found, as the approval shows it (the engine's `verification` field). */
function verificationNote(v: unknown): string {
  if (typeof v === 'string' && v !== '') return ` Not verified (${v.replace(/^none: /, '')}).`;
  const o = asObject(v);
  if (typeof o.verifier !== 'string') return '';
  const report = typeof o.report === 'string' && o.report !== '' ? `; report: ${o.report}` : '';
  return ` Verified by ${o.verifier}${o.passed === true ? '' : ' (not passed)'}${report}.`;
}

function readDeadline(o: Record<string, unknown>): number | undefined {
  if (typeof o.deadline === 'number') return o.deadline;
  if (typeof o.deadline === 'string') {
    const t = Date.parse(o.deadline);
    return Number.isNaN(t) ? undefined : t;
  }
  if (typeof o.timeoutMs === 'number' && typeof o.ts === 'number') return o.ts + o.timeoutMs;
  return undefined;
}

/**
 * withAgentSpend lists each agent of listRuns' `agentSpend` (its total at the run's last
 * checkpoint) under the interaction it first spent in, so the Runs view shows what it spent
 * after a window reload. An interaction the checkpoint has no outcome of yet is added with the
 * run's status.
 */
function withAgentSpend(interactions: InteractionState[], raw: unknown, runStatus: string): InteractionState[] {
  for (const [id, v] of Object.entries(asObject(raw))) {
    const spend = readAgentTotal(v);
    if (!spend) continue;
    const where = typeof asObject(v).interaction === 'string' && asObject(v).interaction !== '' ? String(asObject(v).interaction) : '?';
    let inter = interactions.find((i) => i.id === where);
    if (!inter) {
      inter = { id: where, status: runStatus, agents: [] };
      interactions.push(inter);
    }
    const status = inter.status === 'completed' ? 'finished' : inter.status;
    inter.agents.push({ id, status, spend });
  }
  return interactions;
}

export function readRuns(raw: unknown): RunState[] {
  const list = Array.isArray(raw) ? raw : asArray(asObject(raw).runs);
  return list
    .map((r) => asObject(r))
    .filter((r) => typeof r.runId === 'string')
    .map((r) => {
      const runId = String(r.runId);
      return {
        runId,
        flow: typeof r.flow === 'string' ? r.flow : '',
        flowFile: typeof r.flowFile === 'string' && r.flowFile !== '' ? r.flowFile : undefined,
        dryRun: r.dryRun === true ? true : undefined,
        updatedAt: typeof r.updated === 'string' ? r.updated : undefined,
        status: typeof r.state === 'string' ? r.state : typeof r.status === 'string' ? r.status : 'unknown',
        startedAt: typeof r.startedAt === 'string' ? r.startedAt : typeof r.started === 'string' ? r.started : undefined,
        endedAt: typeof r.endedAt === 'string' ? r.endedAt : undefined,
        terminationReason: typeof r.terminationReason === 'string' ? r.terminationReason : typeof r.reason === 'string' && r.reason !== '' ? r.reason : undefined,
        spend: readSpend(r.spend),
        resumable: r.resumable === true ? true : undefined,
        interactions: withAgentSpend(asArray(r.interactions).map(readInteraction), r.agentSpend, typeof r.status === 'string' ? r.status : 'unknown'),
        pending: asArray(r.pending)
          .map((p) => readPending(p, runId))
          .filter((p): p is PendingRequest => p !== undefined),
        forkOf: readForkOrigin(r.forkOf),
      };
    });
}

/** One agentcanvas/runEvent notification: a JSONL log event plus the runId. */
export interface RunEvent {
  runId: string;
  flow?: string;
  event: string;
  ts?: number | string;
  interactionId?: string;
  agentId?: string;
  [k: string]: unknown;
}

/** The environment-variable names a flow's agents ask for (agents[].runtime.env), from loadFlow. */
export function flowEnvNames(loadFlowResult: unknown): string[] {
  const flow = asObject(asObject(loadFlowResult).flow);
  const names = new Set<string>();
  for (const a of asArray(flow.agents)) for (const n of asArray(asObject(asObject(a).runtime).env)) if (typeof n === 'string' && n !== '') names.add(n);
  return [...names].sort();
}

/**
 * Reads an agentcanvas/runEvent. The server nests the event's own fields in "data"; the JSONL
 * log has them flat. Consumers get them flat (the common fields win), with "data" kept as is.
 */
export function readRunEvent(raw: unknown): RunEvent | undefined {
  const o = asObject(raw);
  if (typeof o.runId !== 'string' || typeof o.event !== 'string') return undefined;
  return { ...asObject(o.data), ...o } as RunEvent;
}

export interface AnswerQuestionParams {
  runId: string;
  questionId: string;
  answer: string;
}
export interface ProvideDependencyParams {
  runId: string;
  requestId: string;
  value: string;
}
export interface RejectDependencyParams {
  runId: string;
  requestId: string;
  reason: string;
}

// ---- proposals ------------------------------------------------------------------------------

export interface ProposalRef {
  runId: string;
  agentId: string;
}

export interface ApplyProposalParams extends ProposalRef {
  /** Whole files accepted, by path. With hunks empty too, everything is applied. */
  files?: string[];
  /** Single hunks accepted (index of the hunk in the file in changes.patch, from 1). */
  hunks?: Array<{ file: string; index: number }>;
  /** Hunks of the three-way merge of files the workspace changed since (getProposal's files[].merge.hunks). */
  merge?: Array<{ file: string; index: number }>;
  /** How each picked conflict of a merge is settled. */
  resolve?: Array<{ file: string; index: number; take: Take; text?: string }>;
  /** The workspace blob each merge was reviewed against: a file changed since is refused. */
  against?: Record<string, string>;
  /** Only check (git apply --check semantics); nothing is written. */
  check?: boolean;
  /** Held files (getProposal's held) the person confirmed by name; any other held file is refused. */
  confirm?: string[];
  /** getProposal's patchDigest of the review applied from: a patch changed since is refused. */
  reviewed?: string;
}

/** A file the person confirms by name before it is applied: it changes how things run, or its name looks like another. */
export interface Hold {
  path: string;
  kind: 'control' | 'name';
  reason: string;
  /** The name as it must be shown: look-alike letters and invisible characters as \u escapes. */
  shown: string;
}

/** One run of a worker's tests (test) or verifier (verify) in its sandbox. */
export interface TestResult {
  kind: string;
  command: string[];
  exitCode: number;
  passed: boolean;
  failing: string[];
  error?: string;
  /** The proposal's patch is the one it ran against. */
  current: boolean;
}

export function readHolds(raw: unknown): Hold[] {
  return asArray(raw)
    .map(asObject)
    .filter((h) => typeof h.path === 'string' && h.path !== '')
    .map((h) => ({ path: String(h.path), kind: h.kind === 'name' ? ('name' as const) : ('control' as const), reason: String(h.reason ?? ''), shown: String(h.shown ?? h.path) }));
}

export function readTestResults(raw: unknown): TestResult[] {
  return asArray(asObject(raw).results)
    .map(asObject)
    .map((r) => ({
      kind: String(r.kind ?? 'test'),
      command: asArray(r.command).map(String),
      exitCode: typeof r.exitCode === 'number' ? r.exitCode : 0,
      passed: r.passed === true,
      failing: asArray(r.failing).map(String),
      error: typeof r.error === 'string' && r.error !== '' ? r.error : undefined,
      current: r.current === true,
    }));
}

/** How a conflict of a merge is settled; markers writes both sides between git's conflict markers. */
export type Take = 'mine' | 'theirs' | 'both' | 'edit' | 'markers';

/** Another open proposal this one's changes collide with (getProposal's collisions). */
export interface Collision {
  path: string;
  kind: string;
  lines: { start: number; count: number };
  otherRunId: string;
  otherAgentId: string;
  otherLines: { start: number; count: number };
  hunk: number;
  message: string;
}

/** One hunk of a proposal re-based on the workspace (getProposal's files[].merge.hunks). */
export interface MergeHunk {
  index: number;
  conflict: boolean;
  /** The workspace lines it replaces: from start (1-based), count lines (0: inserted before start). */
  start: number;
  count: number;
  ours: string;
  theirs: string;
  base: string;
  whole: boolean;
  reason?: string;
  /** Applied proposals the workspace's side came from: "worker_1 (run r1)". */
  from: string[];
}

export interface FileMerge {
  workspace: string;
  state: 'clean' | 'conflicts' | 'applied';
  conflicts: number;
  hunks: MergeHunk[];
}

/** What getProposal says beyond the patch on disk: the check, collisions, and merges. */
export interface ReviewInfo {
  applicable: boolean;
  problems: ApplyConflict[];
  warnings: string[];
  collisions: Collision[];
  /** Per file: the collisions of each of its patch hunks (index 0 = hunk 1). */
  hunkCollisions: Map<string, Collision[][]>;
  /** Files the workspace changed since the proposal was made, merged. */
  merges: Map<string, FileMerge>;
  /** Per file: each patch hunk's key and reviewed mark (index 0 = hunk 1). */
  hunkMarks: Map<string, HunkMark[]>;
  /** The review conversation: comments, the worker's answers, revisions. */
  conversation?: ReviewConversation;
  /** Files the person confirms by name before they are applied. */
  held: Hold[];
  /** The last test and verify results in the worker's sandbox. */
  tests: TestResult[];
  /** The digest of the patch this review shows (applyProposal's reviewed). */
  patchDigest: string;
}

/** A hunk's identity across revisions (its file and lines) and the person's reviewed mark. */
export interface HunkMark {
  key: string;
  reviewed: boolean;
}

/** One review comment on a proposal's line (or whole file: line 0). */
export interface ReviewComment {
  id: string;
  path: string;
  line: number;
  kind: 'comment' | 'reject';
  text: string;
  createdAt: string;
  revision: number;
  sentIn: number;
  answer?: string;
  answeredIn: number;
}

/** agentcanvas/getReviewComments, and getProposal's review. */
export interface ReviewConversation {
  revision: number;
  revisions: Array<{ number: number; createdAt: string; runId: string; comments: string[] }>;
  comments: ReviewComment[];
  reviewed: string[];
  /** The revision run at work, if any. */
  revising?: { runId: string; since: string };
}

const num = (v: unknown, d = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);

export function readReviewConversation(raw: unknown): ReviewConversation {
  const o = asObject(raw);
  const rv = asObject(o.revising);
  return {
    revision: num(o.revision, 1),
    revisions: asArray(o.revisions)
      .map(asObject)
      .map((r) => ({ number: num(r.number, 1), createdAt: String(r.createdAt ?? ''), runId: String(r.runId ?? ''), comments: asArray(r.comments).filter((c): c is string => typeof c === 'string') })),
    comments: asArray(o.comments)
      .map(asObject)
      .map((c) => ({
        id: String(c.id ?? ''),
        path: String(c.path ?? ''),
        line: num(c.line),
        kind: c.kind === 'reject' ? ('reject' as const) : ('comment' as const),
        text: String(c.text ?? ''),
        createdAt: String(c.createdAt ?? ''),
        revision: num(c.revision, 1),
        sentIn: num(c.sentIn),
        answer: typeof c.answer === 'string' && c.answer !== '' ? c.answer : undefined,
        answeredIn: num(c.answeredIn),
      })),
    reviewed: asArray(o.reviewed).filter((k): k is string => typeof k === 'string'),
    revising: o.revising ? { runId: String(rv.runId ?? ''), since: String(rv.since ?? '') } : undefined,
  };
}

/** agentcanvas/getInterdiff. */
export interface Interdiff {
  from: number;
  to: number;
  files: string[];
  patch: string;
  /** Each file as the two revisions leave it, for a side-by-side diff. */
  sides: InterdiffSide[];
}

export interface InterdiffSide {
  path: string;
  old: string;
  new: string;
  oldExists: boolean;
  newExists: boolean;
  binary: boolean;
}

export function readInterdiff(raw: unknown): Interdiff {
  const o = asObject(raw);
  return {
    from: num(o.from),
    to: num(o.to),
    files: asArray(o.files).filter((f): f is string => typeof f === 'string'),
    patch: String(o.patch ?? ''),
    sides: readSides(o.sides),
  };
}

function readSides(v: unknown): InterdiffSide[] {
  return asArray(v)
    .map(asObject)
    .filter((x) => typeof x.path === 'string')
    .map((x) => ({ path: String(x.path), old: String(x.old ?? ''), new: String(x.new ?? ''), oldExists: x.oldExists === true, newExists: x.newExists === true, binary: x.binary === true }));
}

/**
 * agentcanvas/getProposalSides: each file of a proposal as its patch makes it (what an apply
 * writes), never the worker's work/ as it is now; patch is the digest of the patch they show.
 */
export interface ProposalSides {
  patch: string;
  sides: InterdiffSide[];
}

export function readProposalSides(raw: unknown): ProposalSides {
  const o = asObject(raw);
  return { patch: String(o.patch ?? ''), sides: readSides(o.sides) };
}

function readRange(v: unknown): { start: number; count: number } {
  const o = asObject(v);
  return { start: typeof o.start === 'number' ? o.start : 0, count: typeof o.count === 'number' ? o.count : 0 };
}

function readCollision(v: unknown): Collision {
  const o = asObject(v);
  return {
    path: String(o.path ?? ''),
    kind: String(o.kind ?? 'lines'),
    lines: readRange(o.lines),
    otherRunId: String(o.otherRunId ?? ''),
    otherAgentId: String(o.otherAgentId ?? ''),
    otherLines: readRange(o.otherLines),
    hunk: typeof o.hunk === 'number' ? o.hunk : 0,
    message: String(o.message ?? ''),
  };
}

export function readReview(raw: unknown): ReviewInfo {
  const o = asObject(raw);
  const r: ReviewInfo = {
    applicable: o.applicable === true,
    problems: asArray(o.problems).map((p) => ({ path: String(asObject(p).path ?? ''), reason: String(asObject(p).reason ?? '') })),
    warnings: asArray(o.warnings).filter((w): w is string => typeof w === 'string'),
    collisions: asArray(o.collisions).map(readCollision),
    hunkCollisions: new Map(),
    merges: new Map(),
    hunkMarks: new Map(),
    conversation: o.review ? readReviewConversation(o.review) : undefined,
    held: readHolds(o.held),
    tests: readTestResults(o.tests),
    patchDigest: String(o.patchDigest ?? ''),
  };
  for (const f of asArray(o.files).map(asObject)) {
    const file = String(f.path ?? '');
    r.hunkCollisions.set(file, asArray(f.hunks).map((h) => asArray(asObject(h).collisions).map(readCollision)));
    r.hunkMarks.set(file, asArray(f.hunks).map(asObject).map((h) => ({ key: String(h.key ?? ''), reviewed: h.reviewed === true })));
    const m = asObject(f.merge);
    if (f.merge === undefined || f.merge === null) continue;
    const state = m.state === 'conflicts' || m.state === 'applied' ? m.state : 'clean';
    r.merges.set(file, {
      workspace: String(m.workspace ?? ''),
      state,
      conflicts: typeof m.conflicts === 'number' ? m.conflicts : 0,
      hunks: asArray(m.hunks).map(asObject).map((h, i) => ({
        index: typeof h.index === 'number' ? h.index : i + 1,
        conflict: h.conflict === true,
        start: typeof h.start === 'number' ? h.start : 1,
        count: typeof h.count === 'number' ? h.count : 0,
        ours: String(h.ours ?? ''),
        theirs: String(h.theirs ?? ''),
        base: String(h.base ?? ''),
        whole: h.whole === true,
        reason: typeof h.reason === 'string' ? h.reason : undefined,
        from: asArray(h.from).filter((x): x is string => typeof x === 'string'),
      })),
    });
  }
  return r;
}

/** Lines of a file one applied proposal wrote (agentcanvas/lineOrigins). */
export interface LineOrigin {
  start: number;
  count: number;
  entry: string;
  at: string;
  runId: string;
  agentId: string;
  notes?: string;
  merged: boolean;
  origin?: { flow?: string; interactionId?: string; round?: number; backend?: string; prompt?: string; inputTokens?: number; outputTokens?: number; costUsd?: number; costKnown?: boolean };
}

export function readLineOrigins(raw: unknown): LineOrigin[] {
  return asArray(asObject(raw).origins)
    .map(asObject)
    .filter((o) => typeof o.start === 'number' && typeof o.count === 'number')
    .map((o) => ({
      start: o.start as number,
      count: o.count as number,
      entry: String(o.entry ?? ''),
      at: String(o.at ?? ''),
      runId: String(o.runId ?? ''),
      agentId: String(o.agentId ?? ''),
      notes: typeof o.notes === 'string' && o.notes !== '' ? o.notes : undefined,
      merged: o.merged === true,
      origin: o.origin && typeof o.origin === 'object' ? (o.origin as LineOrigin['origin']) : undefined,
    }));
}

export interface ApplyConflict {
  path: string;
  reason: string;
}

export interface ApplyResult {
  /** Applied; for a check (check: true), would apply. */
  applied: boolean;
  files: string[];
  conflicts: ApplyConflict[];
  message?: string;
  warnings?: string[];
}

export function readApplyResult(raw: unknown): ApplyResult {
  const o = asObject(raw);
  return {
    // a check (dryRun) that was not refused would apply: refusals are errors (-32803)
    applied: o.applied === true || o.ok === true || o.dryRun === true,
    files: asArray(o.files ?? o.appliedFiles).flatMap((f) => (typeof f === 'string' ? [f] : typeof asObject(f).path === 'string' ? [String(asObject(f).path)] : [])),
    conflicts: asArray(o.conflicts)
      .map((c) => asObject(c))
      .map((c) => ({ path: String(c.path ?? c.file ?? '?'), reason: String(c.reason ?? c.message ?? 'conflict') })),
    message: typeof o.message === 'string' ? o.message : undefined,
    warnings: asArray(o.warnings).filter((w): w is string => typeof w === 'string'),
  };
}

/** The sidecar's error for a well-formed request the domain refused (a proposal that does not apply). */
export const CodeRequestFailed = -32803;

export interface RejectProposalParams extends ProposalRef {
  reason?: string;
}

/** The sidecar's error code for a feature whose package has not landed in this build. */
export const CodeNotAvailable = -32010;

// ---- helpers --------------------------------------------------------------------------------

export function asObject(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

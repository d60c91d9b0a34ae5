// The Runs view: runs → interactions → agents (status, termination reason), and the requests
// each run is waiting on (click to answer).
import * as vscode from 'vscode';
import type { AgentState, InteractionState, PendingRequest, RunState } from '../protocol';
import { agentSpendLabel, spendLabel } from '../canvas/spend';
import { RunsModel, canResume, interruptedTooltip, isInterrupted, pendingLabel, statusIcon } from './runsModel';
import { forksOf, topLevelRuns, turnLabel } from './forks';
import type { Turn } from './transcript';

export type RunNode =
  | { kind: 'run'; run: RunState }
  | { kind: 'interaction'; run: RunState; interaction: InteractionState }
  | { kind: 'agent'; run: RunState; agent: AgentState }
  | { kind: 'pending'; run: RunState; pending: PendingRequest }
  | { kind: 'turns'; run: RunState }
  | { kind: 'turn'; run: RunState; turn: Turn }
  | { kind: 'message'; text: string };

export class RunsTree implements vscode.TreeDataProvider<RunNode> {
  private readonly emitter = new vscode.EventEmitter<RunNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  message: string | undefined;

  /** The turns read for each run's Turns node; a live run's are read again at each refresh. */
  private readonly turns = new Map<string, Turn[] | 'reading'>();

  /** turnsOf reads a run's turns (its transcript), for its Turns node. */
  constructor(
    readonly model: RunsModel,
    private readonly turnsOf: (runId: string) => Promise<Turn[]> = async () => [],
  ) {}

  refresh(): void {
    for (const r of this.model.all()) if (r.status === 'running' || r.status === 'waiting') this.turns.delete(r.runId);
    this.emitter.fire(undefined);
  }

  /** A run's turns once read; the first call starts reading them and shows that it does. */
  private turnNodes(run: RunState): RunNode[] {
    const got = this.turns.get(run.runId);
    if (got === undefined) {
      this.turns.set(run.runId, 'reading');
      void this.turnsOf(run.runId).then((t) => {
        this.turns.set(run.runId, t);
        this.emitter.fire(undefined);
      });
    }
    if (got === undefined || got === 'reading') return [{ kind: 'message', text: 'Reading the turns…' }];
    if (got.length === 0) return [{ kind: 'message', text: 'No turn recorded (no agent ran, or its transcript was pruned).' }];
    return got.map((turn): RunNode => ({ kind: 'turn', run, turn }));
  }

  getChildren(node?: RunNode): RunNode[] {
    if (!node) {
      const runs = this.model.all();
      if (runs.length === 0) return [{ kind: 'message', text: this.message ?? 'No runs yet. Run a flow with "AgentCanvas: Run Flow".' }];
      return topLevelRuns(runs).map((run) => ({ kind: 'run', run }));
    }
    if (node.kind === 'run') {
      return [
        ...node.run.pending.map((pending): RunNode => ({ kind: 'pending', run: node.run, pending })),
        ...node.run.interactions.map((interaction): RunNode => ({ kind: 'interaction', run: node.run, interaction })),
        { kind: 'turns', run: node.run },
        // its forks, each with the turn it left from (forks.ts)
        ...forksOf(this.model.all(), node.run.runId).map((run): RunNode => ({ kind: 'run', run })),
      ];
    }
    if (node.kind === 'interaction') return node.interaction.agents.map((agent) => ({ kind: 'agent', run: node.run, agent }));
    if (node.kind === 'turns') return this.turnNodes(node.run);
    return [];
  }

  getTreeItem(node: RunNode): vscode.TreeItem {
    return runTreeItem(node);
  }
}

export function runTreeItem(node: RunNode): vscode.TreeItem {
  const C = vscode.TreeItemCollapsibleState;
  switch (node.kind) {
    case 'message':
      return new vscode.TreeItem(node.text, C.None);
    case 'run': {
      const r = node.run;
      const it = new vscode.TreeItem(r.flow || r.runId, C.Expanded);
      it.id = `run:${r.runId}`;
      const spent = spendLabel(r.spend);
      it.description = [r.status, r.terminationReason, spent, r.runId].filter(Boolean).join(' · ');
      it.iconPath = new vscode.ThemeIcon(statusIcon(r.status));
      it.contextValue = r.status === 'running' || r.status === 'waiting' ? 'run.active' : 'run.done';
      if (r.forkOf) {
        // listed under its parent (forks.ts): the turn it left from comes first
        it.label = `fork from turn ${r.forkOf.turn}`;
        it.description = [r.flow, it.description].filter(Boolean).join(' · ');
      }
      it.tooltip = `${r.flow}\nrun ${r.runId}\nstatus: ${r.status}${r.terminationReason ? `\nreason: ${r.terminationReason}` : ''}${r.startedAt ? `\nstarted: ${r.startedAt}` : ''}${spent ? `\nspent: ${spent}` : ''}${r.spend?.unreported.length ? `\nno usage reported by: ${r.spend.unreported.join(', ')}` : ''}`;
      if (!isInterrupted(r) && canResume(r)) it.contextValue = 'run.resumable'; // stopped by the person: Resume Run
      if (isInterrupted(r)) {
        // its engine died (a window reload): Resume Run / Close Run act on it
        it.contextValue = 'run.interrupted';
        it.description = ['interrupted', r.pending.length > 0 && `was waiting on ${r.pending.length} request(s)`, r.runId].filter(Boolean).join(' · ');
        it.iconPath = new vscode.ThemeIcon(statusIcon(r.status), new vscode.ThemeColor('list.warningForeground'));
        it.tooltip = interruptedTooltip(r);
      }
      return it;
    }
    case 'interaction': {
      const i = node.interaction;
      const it = new vscode.TreeItem(i.patternId ? `${i.id} (${i.patternId})` : i.id, i.agents.length > 0 ? C.Expanded : C.None);
      it.id = `run:${node.run.runId}/i:${i.id}`;
      it.description = [i.status, i.terminationReason && `reason: ${i.terminationReason}`, i.round !== undefined && `round ${i.round}`, spendLabel(i.spend)].filter(Boolean).join(' · ');
      it.iconPath = new vscode.ThemeIcon(statusIcon(i.status));
      it.contextValue = 'interaction';
      return it;
    }
    case 'agent': {
      const a = node.agent;
      const it = new vscode.TreeItem(a.role ? `${a.id} (${a.role})` : a.id, C.None);
      it.id = `run:${node.run.runId}/a:${a.id}`;
      const spent = agentSpendLabel(a.spend);
      it.description = [a.status, a.terminationReason && `reason: ${a.terminationReason}`, spent].filter(Boolean).join(' · ');
      it.iconPath = new vscode.ThemeIcon(statusIcon(a.status));
      it.contextValue = 'agent';
      it.command = { command: 'agentcanvas.showTranscript', title: 'Show Transcript', arguments: [node] };
      it.tooltip = `${a.id}: click for its transcript (what it was sent, its replies and stderr)${spent ? `\nspent: ${spent}${a.spend?.metered ? ' (metered by the model gateway, call by call)' : ''}` : ''}`;
      return it;
    }
    case 'turns': {
      const it = new vscode.TreeItem('Turns', C.Collapsed);
      it.id = `run:${node.run.runId}/turns`;
      it.iconPath = new vscode.ThemeIcon('list-ordered');
      it.tooltip = 'Every agent turn of the run, in the order they ended: Fork from Here starts a new run from the end of one';
      it.contextValue = 'turns';
      return it;
    }
    case 'turn': {
      const t = node.turn;
      const { label, description } = turnLabel(t);
      const it = new vscode.TreeItem(label, C.None);
      it.id = `run:${node.run.runId}/t:${t.seq}`;
      it.description = description;
      it.iconPath = new vscode.ThemeIcon(t.status === 'completed' ? 'debug-stackframe-dot' : 'error');
      it.contextValue = 'turn';
      it.command = { command: 'agentcanvas.showTranscript', title: 'Show Transcript', arguments: [{ runId: node.run.runId, agent: t.agent }] };
      it.tooltip = `turn ${t.seq} of ${node.run.runId}: ${t.agent} in ${t.interactionId}, round ${t.round}\nclick for its transcript; Fork from Here starts a new run from the end of this turn`;
      return it;
    }
    case 'pending': {
      const p = node.pending;
      const it = new vscode.TreeItem(pendingLabel(p), C.None);
      it.id = `run:${node.run.runId}/p:${p.requestId}`;
      if (isInterrupted(node.run)) {
        // what the run was waiting on when it stopped: not answerable until it is resumed
        it.description = `${p.agentId ?? ''} was waiting (resume the run to be asked again)`.trim();
        it.iconPath = new vscode.ThemeIcon('bell-slash');
        it.contextValue = 'pending.interrupted';
        return it;
      }
      it.description = `${p.agentId ?? ''} waiting for you`.trim();
      it.iconPath = new vscode.ThemeIcon('bell-dot');
      it.contextValue = 'pending';
      it.command = { command: 'agentcanvas.answerPending', title: 'Answer', arguments: [p] };
      return it;
    }
  }
}

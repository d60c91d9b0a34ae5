// The status bar item, driven by the sidecar's agentcanvas/status notification and by the
// client's own state (starting, stopped). Clicking it opens a small menu: log, restart, stop run.
import * as vscode from 'vscode';
import type { StatusParams } from './protocol';

export type ClientState = 'starting' | 'running' | 'stopped' | 'failed';

export interface StatusView {
  text: string;
  tooltip: string;
  /** ThemeColor id of the background, for warning and error. */
  background?: 'statusBarItem.warningBackground' | 'statusBarItem.errorBackground';
}

/**
 * Pure: what the item shows for a client state, the last health notification, the agents'
 * requests waiting for an answer and the other things that need the person (proposals to review,
 * conflicts to resolve, comments to send: the Needs You view).
 */
export function renderStatus(state: ClientState, health: StatusParams | undefined, pendingPrompts: number, otherNeeds = 0): StatusView {
  const total = pendingPrompts + otherNeeds;
  const bell = total > 0 ? ` $(bell) ${total}` : '';
  if (state === 'starting') return { text: '$(sync~spin) AgentCanvas', tooltip: 'AgentCanvas: starting the sidecar…' };
  if (state === 'stopped') return { text: '$(circle-slash) AgentCanvas', tooltip: 'AgentCanvas: the sidecar is stopped. Click to restart.' };
  if (state === 'failed')
    return {
      text: '$(error) AgentCanvas',
      tooltip: 'AgentCanvas: the sidecar is not running. Click for the log or to restart.',
      background: 'statusBarItem.errorBackground',
    };
  const running = health?.runningFlows ?? [];
  const runs = running.length > 0 ? ` $(play) ${running.length}` : '';
  const lines = [`AgentCanvas sidecar: ${health?.health === 'warning' ? 'warning' : health?.health === 'error' ? 'error' : 'healthy'}`];
  if (health?.message) lines.push(health.message);
  for (const r of running) lines.push(`running: ${r.flow || r.runId}${r.runId && r.flow ? ` (${r.runId})` : ''}`);
  if (pendingPrompts > 0) lines.push(`${pendingPrompts} request(s) waiting for you`);
  if (otherNeeds > 0) lines.push(`${otherNeeds} proposal(s), conflict(s) or comment(s) waiting for you (the Needs You view)`);
  const tooltip = lines.join('\n');
  switch (health?.health) {
    case 'warning':
      return { text: `$(warning) AgentCanvas${runs}${bell}`, tooltip, background: 'statusBarItem.warningBackground' };
    case 'error':
      return { text: `$(error) AgentCanvas${runs}${bell}`, tooltip, background: 'statusBarItem.errorBackground' };
    default:
      return { text: `$(check) AgentCanvas${runs}${bell}`, tooltip };
  }
}

export class StatusItem implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private state: ClientState = 'starting';
  private health: StatusParams | undefined;
  private pending = 0;
  private others = 0;

  constructor() {
    this.item = vscode.window.createStatusBarItem('agentcanvas.status', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'AgentCanvas';
    this.item.command = 'agentcanvas.statusMenu';
    this.render();
    this.item.show();
  }

  get runningFlows() {
    return this.state === 'running' ? (this.health?.runningFlows ?? []) : [];
  }

  setState(state: ClientState): void {
    this.state = state;
    if (state !== 'running') this.health = undefined;
    this.render();
  }
  setHealth(h: StatusParams): void {
    this.health = h;
    this.render();
  }
  setPending(n: number): void {
    this.pending = n;
    this.render();
  }
  /** Proposals to review, conflicts to resolve, comments to send (the Needs You view). */
  setOtherNeeds(n: number): void {
    this.others = n;
    this.render();
  }

  private render(): void {
    const v = renderStatus(this.state, this.health, this.pending, this.others);
    this.item.text = v.text;
    this.item.tooltip = v.tooltip;
    this.item.accessibilityInformation = { label: v.tooltip.split('\n')[0], role: 'button' };
    this.item.backgroundColor = v.background ? new vscode.ThemeColor(v.background) : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}

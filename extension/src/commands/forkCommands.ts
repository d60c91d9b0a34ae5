// Fork from Here: a new run from the end of a turn of a run (docs/runs.md, "Forks"), from the
// Runs view's turns or the canvas run overlay. The sidecar first says what the fork would
// restore and what it cannot, per agent; the person then forks, or forks with changes.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Method } from '../protocol';
import { withSidecar, type SidecarClient } from '../sidecar';
import type { Log } from '../log';
import type { RunsModel } from '../views/runsModel';
import { forkedRunId, forkPlanDetail, parseForkChanges, readForkPlan, turnLabel } from '../views/forks';
import { parseTurns, transcriptPath, type Turn } from '../views/transcript';

/** A run's turns, read from its transcript (none when it has none). */
export async function readTurns(runId: string): Promise<Turn[]> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) return [];
  try {
    return parseTurns(new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(folder.uri, ...transcriptPath(runId)))));
  } catch {
    return [];
  }
}

export class ForkController {
  constructor(
    private readonly sidecar: SidecarClient,
    private readonly log: Log,
    private readonly runs: RunsModel,
    private readonly refresh: () => Promise<void>,
    /** stored values for the env names a flow lists, as for Run Flow */
    private readonly envFor: (uri: vscode.Uri) => Promise<Record<string, string>>,
    private readonly turnsOf: (runId: string) => Promise<Turn[]> = readTurns,
  ) {}

  register(): vscode.Disposable[] {
    return [vscode.commands.registerCommand('agentcanvas.forkRun', (arg?: unknown) => withSidecar(this.sidecar, this.log, () => this.fork(arg)))];
  }

  /**
   * Forks the run a Runs view turn names ({runId, at} too), or, from the canvas overlay
   * ({runId, agentId}), at the turn of that agent the person picks. Returns the fork's run id.
   */
  async fork(arg?: unknown): Promise<string | undefined> {
    const target = await this.target(arg);
    if (!target) return undefined;
    const { runId, at } = target;
    const plan = readForkPlan(await this.sidecar.request(Method.forkRun, { runId, at, planOnly: true }));
    if (!plan) throw new Error('the sidecar answered forkRun without a plan');
    const pick = await vscode.window.showInformationMessage(
      `Fork run ${runId} from the end of turn ${at} of ${plan.turns}?`,
      { modal: true, detail: forkPlanDetail(plan) },
      'Fork',
      'Fork with Changes…',
    );
    if (!pick) return undefined;
    let set: string[] = [];
    if (pick === 'Fork with Changes…') {
      const text = await vscode.window.showInputBox({
        title: `Fork run ${runId} from turn ${at}: changes`,
        prompt: 'KEY=VALUE, separated by ";": agent.<id>.backend, agent.<id>.model, agent.<id>.prompt, agent.<id>.command, task',
        placeHolder: 'agent.reviewer.backend=gemini; agent.coder.model=claude-sonnet-4-5',
      });
      if (text === undefined) return undefined;
      set = parseForkChanges(text);
    }
    const env = await this.env(runId);
    const res = await this.sidecar.request(Method.forkRun, { runId, at, ...(set.length > 0 ? { set } : {}), ...(Object.keys(env).length > 0 ? { env } : {}) });
    const id = forkedRunId(res);
    this.log.info(`forked run ${runId} at turn ${at}${set.length ? ` with ${set.join('; ')}` : ''}: ${id ?? '?'}`);
    await this.refresh();
    void vscode.window.showInformationMessage(`AgentCanvas: fork ${id ?? ''} of run ${runId} from turn ${at} started (Runs view, under its parent).`);
    return id;
  }

  /** The run and turn an argument names, or the agent's turn the person picks. */
  private async target(arg: unknown): Promise<{ runId: string; at: number } | undefined> {
    const a = (arg ?? {}) as { run?: { runId?: unknown }; turn?: { seq?: unknown }; runId?: unknown; at?: unknown; agentId?: unknown };
    const runId = a.run?.runId ?? a.runId;
    const at = a.turn?.seq ?? a.at;
    if (typeof runId !== 'string') {
      void vscode.window.showInformationMessage('AgentCanvas: open a run\'s Turns in the Runs view and use Fork from Here on one.');
      return undefined;
    }
    if (typeof at === 'number') return { runId, at };
    const turns = (await this.turnsOf(runId)).filter((t) => typeof a.agentId !== 'string' || t.agent === a.agentId);
    if (turns.length === 0) {
      void vscode.window.showInformationMessage(`AgentCanvas: run ${runId} has no recorded turn${typeof a.agentId === 'string' ? ` of ${a.agentId}` : ''} to fork from.`);
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      turns.reverse().map((t) => ({ ...turnLabel(t), seq: t.seq })),
      { title: `Fork run ${runId} from the end of which turn?`, matchOnDescription: true },
    );
    return picked ? { runId, at: picked.seq } : undefined;
  }

  /** The stored values for the env names of the run's flow. */
  private async env(runId: string): Promise<Record<string, string>> {
    const file = this.runs.get(runId)?.flowFile;
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!file || !folder) return {};
    return this.envFor(vscode.Uri.file(path.isAbsolute(file) ? file : path.join(folder.uri.fsPath, file)));
  }
}

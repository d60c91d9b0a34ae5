// Run Flow, Stop Run, Resume Run and Close Run (interrupted runs), Show Run Log, and the Runs
// view refresh.
import * as vscode from 'vscode';
import * as path from 'node:path';
import { resolveFlow } from '../flows';
import { Backends, Method, flowEnvNames, readRuns, skillRunParams, type Backend, type RunEvent, type RunState } from '../protocol';
import { describeError, NotRunningError, withSidecar, type SidecarClient } from '../sidecar';
import type { Log } from '../log';
import type { RunsTree, RunNode } from '../views/runsTree';
import { answerable, canResume, interruptedToOffer, isInterrupted } from '../views/runsModel';
import type { PendingQueue } from '../hitl/pending';
import { RunLogPanel } from '../views/runLogPanel';
import { parseTurns, renderTranscript, transcriptPath } from '../views/transcript';
import { doctorText, problemLines, runDoctor } from './preflight';

/** The scheme of the read-only transcript documents (Show Transcript). */
const TRANSCRIPT_SCHEME = 'agentcanvas-transcript';
import type { StatusItem } from '../status';
import { progressWords, runEndWords, RUN_END_EVENTS } from '../views/eventWords';

const ENDED = new Set(['run_finished', 'run_failed', 'run_stopped']);

export class RunController {
  private readonly listeners = new Set<(ev: RunEvent) => void>();
  /** Tells VS Code to read a transcript document again (it keeps virtual documents until closed). */
  private readonly transcriptChanged = new vscode.EventEmitter<vscode.Uri>();

  constructor(
    private readonly sidecar: SidecarClient,
    private readonly log: Log,
    private readonly tree: RunsTree,
    private readonly pending: PendingQueue,
    private readonly status: StatusItem,
    /** Stored values for environment-variable names (SecretStorage); none by default. */
    private readonly storedEnv: (names: string[]) => Promise<Record<string, string>> = async () => ({}),
  ) {}

  /** Called for every agentcanvas/runEvent. */
  onRunEvent(ev: RunEvent): void {
    const unknown = this.tree.model.apply(ev);
    if (this.pending.onRunEvent(ev)) void this.pending.promptNext();
    this.tree.model.setPending(this.pending.list());
    this.tree.refresh();
    for (const l of this.listeners) l(ev);
    if (unknown) void this.refresh();
    this.logEvent(ev);
  }

  /** The output channel says how every run ended, and every warning and error of a run. */
  private logEvent(ev: RunEvent): void {
    if (RUN_END_EVENTS.has(ev.event)) {
      const words = runEndWords(ev, ev.flow ?? '');
      if (ev.status === 'completed') this.log.info(words);
      else this.log.warn(words);
    } else if (ev.event === 'warning' || ev.event === 'error') {
      this.log.warn(`run ${ev.runId}: ${progressWords(ev)}`);
    }
  }

  /** Re-fetches runs and the requests they wait on (after activation, reload or restart). */
  async refresh(): Promise<void> {
    if (!this.sidecar.running) {
      this.tree.message = 'The AgentCanvas sidecar is not running.';
      this.tree.refresh();
      return;
    }
    try {
      const runs = readRuns(await this.sidecar.request(Method.listRuns, {}));
      this.tree.message = undefined;
      this.tree.model.replace(runs);
      this.pending.replaceAll(answerable(runs));
      this.tree.model.setPending(this.pending.list());
    } catch (e) {
      this.tree.message = `Runs are not available: ${describeError(e)}`;
      this.log.warn(`listRuns: ${describeError(e)}`);
    }
    this.tree.refresh();
    if (this.pending.size > 0) void this.pending.promptNext();
  }

  register(): vscode.Disposable[] {
    return [
      vscode.commands.registerCommand('agentcanvas.runFlow', (arg?: unknown) => withSidecar(this.sidecar, this.log, () => this.runFlow(arg))),
      vscode.commands.registerCommand('agentcanvas.stopRun', (arg?: unknown) => withSidecar(this.sidecar, this.log, () => this.stopRun(arg))),
      vscode.commands.registerCommand('agentcanvas.showRunLog', (arg?: unknown) => this.showRunLog(arg)),
      vscode.commands.registerCommand('agentcanvas.refreshRuns', () => this.refresh()),
      vscode.commands.registerCommand('agentcanvas.resumeRun', (arg?: unknown) => withSidecar(this.sidecar, this.log, () => this.resumeRun(arg))),
      vscode.commands.registerCommand('agentcanvas.closeRun', (arg?: unknown) => withSidecar(this.sidecar, this.log, () => this.closeRun(arg))),
      vscode.commands.registerCommand('agentcanvas.showTranscript', (arg?: unknown) => this.showTranscript(arg)),
      vscode.workspace.registerTextDocumentContentProvider(TRANSCRIPT_SCHEME, { onDidChange: this.transcriptChanged.event, provideTextDocumentContent: (uri) => this.transcriptText(uri) }),
      this.transcriptChanged,
      vscode.commands.registerCommand('agentcanvas.doctor', () => this.showDoctor()),
    ];
  }

  /**
   * Show Transcript: an agent's turns in a run (the prompt it was sent, its reply and stderr)
   * from .agentcanvas/runs/<run>/turns.jsonl, as a Markdown document in an editor. arg is a
   * Runs view agent item or { runId, agent } (the canvas overlay's link).
   */
  async showTranscript(arg?: unknown): Promise<vscode.TextDocument | undefined> {
    const a = arg as { run?: { runId?: unknown }; agent?: { id?: unknown } | string; runId?: unknown } | undefined;
    const runId = a?.run?.runId ?? a?.runId;
    const agent = typeof a?.agent === 'string' ? a.agent : a?.agent?.id;
    if (typeof runId !== 'string' || typeof agent !== 'string' || !vscode.workspace.workspaceFolders?.[0]) {
      void vscode.window.showInformationMessage('AgentCanvas: pick an agent of a run in the Runs view to see its transcript.');
      return undefined;
    }
    // A read-only document of its own (no "save?" on close), read afresh at every open.
    const uri = vscode.Uri.from({ scheme: TRANSCRIPT_SCHEME, path: `/${encodeURIComponent(runId)}/${encodeURIComponent(agent)}.md` });
    this.transcriptChanged.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
    return doc;
  }

  /** The transcript document's text: the agent's turns read from the run's turns.jsonl. */
  private async transcriptText(uri: vscode.Uri): Promise<string> {
    const [runId, file] = uri.path.split('/').filter(Boolean).map(decodeURIComponent);
    const agent = file.replace(/\.md$/, '');
    const folder = vscode.workspace.workspaceFolders?.[0];
    let text = '';
    try {
      if (folder) text = new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(folder.uri, ...transcriptPath(runId))));
    } catch (e) {
      this.log.warn(`transcript of run ${runId}: ${describeError(e)}`);
    }
    return renderTranscript(runId, agent, parseTurns(text));
  }


  /**
   * After activation (a window reload stopped the previous sidecar and its runs): ONE
   * notification for the interrupted runs worth resuming — those that were waiting for the user,
   * and any started in the last hour — however many there are. Resume resumes them all.
   */
  async offerResume(now = Date.now()): Promise<void> {
    const runs = interruptedToOffer(this.tree.model.all(), now);
    if (runs.length === 0) return;
    const pick = await vscode.window.showWarningMessage(`AgentCanvas: ${runs.length} run(s) were interrupted by the window reload`, 'Resume', 'Show Runs', 'Dismiss');
    if (pick === 'Resume') await Promise.all(runs.map((r) => withSidecar(this.sidecar, this.log, () => this.resumeRun(r.runId))));
    else if (pick === 'Show Runs') await vscode.commands.executeCommand('agentcanvas.runs.focus');
  }

  /**
   * The run an argument names (a Runs view item, a run id), or the one the user picks, among
   * those ok accepts: interrupted ones (Close Run), or also those the person stopped (Resume Run).
   */
  private async interruptedRun(arg: unknown, verb: string, ok: (r: RunState) => boolean = isInterrupted): Promise<RunState | undefined> {
    const id = (arg as { run?: { runId?: unknown } } | undefined)?.run?.runId ?? (typeof arg === 'string' ? arg : undefined);
    const all = this.tree.model.all().filter(ok);
    const what = ok === isInterrupted ? 'interrupted' : 'interrupted or stopped by you';
    if (typeof id === 'string') {
      const run = this.tree.model.get(id);
      if (!run || !ok(run)) {
        void vscode.window.showInformationMessage(`AgentCanvas: run ${id} is ${run?.status ?? 'unknown'}, not ${what}.`);
        return undefined;
      }
      return run;
    }
    if (all.length === 0) {
      void vscode.window.showInformationMessage(`AgentCanvas: no run is ${what}.`);
      return undefined;
    }
    if (all.length === 1) return all[0];
    const picked = await vscode.window.showQuickPick(
      all.map((r) => ({ label: r.flow || r.runId, description: `${r.runId}${r.pending.length > 0 ? ` · was waiting on ${r.pending.length} request(s)` : ''}`, run: r })),
      { placeHolder: `${verb} which run (${what})?` },
    );
    return picked?.run;
  }

  /** The flow file of a run, as a URI for startRun (the sidecar records absolute paths; relative ones are the workspace's). */
  private flowUri(run: RunState): vscode.Uri | undefined {
    if (!run.flowFile) return undefined;
    if (path.isAbsolute(run.flowFile)) return vscode.Uri.file(run.flowFile);
    const folder = vscode.workspace.workspaceFolders?.[0];
    return folder ? vscode.Uri.file(path.join(folder.uri.fsPath, run.flowFile)) : undefined;
  }

  /** Resume Run: startRun with resumeRunId (completed interactions kept, the same run id), followed like Run Flow. */
  private async resumeRun(arg?: unknown): Promise<void> {
    if (!this.sidecar.running) throw new NotRunningError();
    const run = await this.interruptedRun(arg, 'Resume', canResume);
    if (!run) return;
    const uri = this.flowUri(run);
    if (!uri) throw new Error(`run ${run.runId} does not record its flow file`);
    const env = await this.envFor(uri);
    const params = { uri: uri.toString(), resumeRunId: run.runId, ...(run.dryRun ? { dryRun: true } : {}), ...(Object.keys(env).length > 0 ? { env } : {}) };
    const res = (await this.sidecar.request<{ runId?: unknown }>(Method.startRun, params)) ?? {};
    const runId = typeof res.runId === 'string' ? res.runId : run.runId;
    const flow = vscode.workspace.asRelativePath(uri, false);
    this.log.info(`resumed run ${runId} of ${flow}`);
    void this.refresh();
    await this.follow(runId, flow, 'resuming');
  }

  /** Close Run: stopRun marks the interrupted run stopped, so it is no longer offered. */
  private async closeRun(arg?: unknown): Promise<void> {
    if (!this.sidecar.running) throw new NotRunningError();
    const run = await this.interruptedRun(arg, 'Close');
    if (!run) return;
    await this.sidecar.request(Method.stopRun, { runId: run.runId });
    this.log.info(`closed interrupted run ${run.runId}`);
    await this.refresh();
  }

  /** Values the user stored earlier for the env names the flow lists (none when it cannot be read). */
  async envFor(uri: vscode.Uri): Promise<Record<string, string>> {
    try {
      return await this.storedEnv(flowEnvNames(await this.sidecar.request(Method.loadFlow, { uri: uri.toString() })));
    } catch (e) {
      this.log.warn(`reading the flow's env names: ${describeError(e)}`);
      return {};
    }
  }

  /**
   * Invoke Skill: what the person asks of the skill, the files its agent's sandbox receives
   * (the open editors' workspace files, the active one ticked) and a backend; then a run of one
   * agent following the SKILL.md, followed like Run Flow (its edits come back as a proposal).
   */
  async invokeSkill(skill: { folder: string }): Promise<void> {
    if (!this.sidecar.running) throw new NotRunningError();
    const request = await vscode.window.showInputBox({
      title: `Invoke skill ${skill.folder}`,
      prompt: 'What should it do? (optional: its SKILL.md says the rest)',
      ignoreFocusOut: true,
    });
    if (request === undefined) return;
    const files = await this.pickSkillFiles();
    if (files === undefined) return;
    const backend = await this.pickBackend(['command'], `Invoke ${skill.folder} with which agent?`);
    if (!backend) return;
    const res = (await this.sidecar.request<{ runId?: unknown; flow?: unknown }>(Method.startRun, skillRunParams(skill.folder, request, files, backend))) ?? {};
    if (typeof res.runId !== 'string') throw new Error('the sidecar did not return a runId');
    const flow = typeof res.flow === 'string' ? res.flow : `skill-${skill.folder}`;
    this.log.info(`started run ${res.runId} of skill ${skill.folder} with backend ${backend}${files.length ? ` on ${files.join(', ')}` : ''}`);
    void this.refresh();
    await this.follow(res.runId, flow, 'running');
  }

  /** The workspace files open in editors, the active one ticked; undefined when dismissed. */
  private async pickSkillFiles(): Promise<string[] | undefined> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const active = vscode.window.activeTextEditor?.document.uri;
    const open = vscode.window.tabGroups.all.flatMap((g) => g.tabs).map((t) => (t.input as { uri?: unknown } | undefined)?.uri).filter((u): u is vscode.Uri => u instanceof vscode.Uri);
    const rel = (u: vscode.Uri) => (folder && u.scheme === 'file' ? path.relative(folder.uri.fsPath, u.fsPath).split(path.sep).join('/') : '');
    const files = [...new Set([active, ...open].filter((u): u is vscode.Uri => !!u).map(rel))].filter((r) => r !== '' && !r.startsWith('..') && !r.startsWith('.agentcanvas/'));
    if (files.length === 0) return [];
    const activeRel = active ? rel(active) : '';
    const picked = await vscode.window.showQuickPick(
      files.map((f) => ({ label: f, picked: f === activeRel })),
      { canPickMany: true, placeHolder: 'Files the agent works on (copied into its sandbox; its edits come back as a proposal)', ignoreFocusOut: true },
    );
    return picked?.map((p) => p.label);
  }

  private async pickBackend(exclude: readonly Backend[] = [], placeHolder = 'Run with which backend?'): Promise<Backend | undefined> {
    const def = vscode.workspace.getConfiguration('agentcanvas').get<string>('defaultBackend', 'auto') as Backend;
    const describe: Record<Backend, string> = {
      auto: "each agent's own backend (claude, codex, gemini or command)",
      claude: 'Claude Code for every agent',
      codex: 'Codex CLI for every agent',
      gemini: 'Gemini CLI for every agent',
      command: "each agent's command",
      'dry-run': 'no agent CLI: scripted replies, no API keys',
    };
    const order = [def, ...Backends.filter((b) => b !== def)].filter((b) => !exclude.includes(b));
    const picked = await vscode.window.showQuickPick(
      order.map((b) => ({ label: b, description: b === def ? `${describe[b]} (default)` : describe[b], backend: b })),
      { placeHolder },
    );
    return picked?.backend;
  }

  private async runFlow(arg?: unknown): Promise<void> {
    if (!this.sidecar.running) throw new NotRunningError(); // before asking which flow
    const uri = await resolveFlow(arg, 'Pick a flow to run');
    if (!uri) return;
    const backend = await this.pickBackend();
    if (!backend) return;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (doc?.isDirty) await doc.save();
    const flow = vscode.workspace.asRelativePath(uri, false);
    if (backend !== 'dry-run' && !(await this.preflight(uri, backend))) return;
    // Values the user stored earlier for the env names the flow lists go with the run, so an
    // agent does not have to ask again; the sidecar gives them only to the agents that list them.
    const env = await this.envFor(uri);
    const params = { uri: uri.toString(), backend, dryRun: backend === 'dry-run', ...(Object.keys(env).length > 0 ? { env } : {}) };
    const res = (await this.sidecar.request<{ runId?: unknown }>(Method.startRun, params)) ?? {};
    if (typeof res.runId !== 'string') throw new Error('the sidecar did not return a runId');
    const runId = res.runId;
    this.log.info(`started run ${runId} of ${flow} with backend ${backend}${Object.keys(env).length ? ` (stored values for ${Object.keys(env).join(', ')})` : ''}`);
    void this.refresh();
    await this.follow(runId, flow, 'running');
  }

  /** Check Agent CLIs: the sidecar's doctor report in an editor. */
  private async showDoctor(): Promise<void> {
    const bin = this.sidecar.binaryPath;
    if (!bin) throw new NotRunningError();
    const text = await doctorText(bin);
    const doc = await vscode.workspace.openTextDocument({ language: 'plaintext', content: text });
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  /**
   * Before a real run: the sidecar's doctor for this flow (or the picked backend). When a CLI
   * is missing or not logged in, say so with the command that fixes it; the person may run
   * anyway (a login doctor cannot see, such as the macOS Keychain). False: do not start.
   */
  private async preflight(uri: vscode.Uri, backend: string): Promise<boolean> {
    const bin = this.sidecar.binaryPath;
    if (!bin || uri.scheme !== 'file') return true;
    const report = await runDoctor(bin, uri.fsPath, backend);
    if (!report || report.ready) return true;
    const lines = problemLines(report);
    this.log.warn(`doctor before the run:\n  ${lines.join('\n  ')}`);
    const fix = report.checks.find((c) => c.status === 'fail' && c.fix)?.fix;
    const pick = await vscode.window.showWarningMessage(`AgentCanvas: not ready for a real run — ${lines.join('; ')}`, { modal: false }, 'Run Anyway', ...(fix ? ['Copy Fix Command'] : []), 'Cancel');
    if (pick === 'Copy Fix Command' && fix) await vscode.env.clipboard.writeText(fix.split('   (')[0]);
    return pick === 'Run Anyway';
  }

  /** A cancellable progress notification until the run ends, then its outcome. */
  private follow(runId: string, flow: string, doing: string): Thenable<void> {
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `AgentCanvas: ${doing} ${path.basename(flow)}`, cancellable: true },
      (progress, token) =>
        new Promise<void>((resolve) => {
          const l = (ev: RunEvent) => {
            if (ev.runId !== runId) return;
            if (ENDED.has(ev.event)) {
              this.listeners.delete(l);
              resolve();
              const reason = typeof ev.reason === 'string' && ev.reason !== '' ? ` (${ev.reason})` : '';
              const outcome = typeof ev.status === 'string' ? ev.status : ev.event.slice(4);
              const msg = `AgentCanvas: ${path.basename(flow)} ${outcome}${reason}.`;
              const show = outcome === 'finished' || outcome === 'completed' ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
              void show(msg, 'Show Run Log', 'Review Proposals').then((p) => {
                if (p === 'Show Run Log') void vscode.commands.executeCommand('agentcanvas.showRunLog', { runId, flow });
                if (p === 'Review Proposals') void vscode.commands.executeCommand('agentcanvas.reviewProposal');
              });
              return;
            }
            const message = progressWords(ev);
            if (message !== undefined) progress.report({ message });
          };
          this.listeners.add(l);
          token.onCancellationRequested(() => {
            this.listeners.delete(l);
            resolve();
            void withSidecar(this.sidecar, this.log, () => this.sidecar.request(Method.stopRun, { runId }));
          });
          const down = this.sidecar.onDidChangeRunning((up) => {
            if (!up) {
              this.listeners.delete(l);
              down.dispose();
              resolve();
            }
          });
        }),
    );
  }

  private async stopRun(arg?: unknown): Promise<void> {
    if (!this.sidecar.running) throw new NotRunningError();
    let runId = (arg as RunNode & { run?: { runId?: string } })?.run?.runId ?? (typeof arg === 'string' ? arg : undefined);
    if (!runId) {
      const active = [
        ...new Map(
          [
            ...this.status.runningFlows.filter((r) => r.runId !== '').map((r) => [r.runId, r.flow] as const),
            ...this.tree.model.all().filter((r) => r.status === 'running' || r.status === 'waiting').map((r) => [r.runId, r.flow] as const),
          ],
        ).entries(),
      ];
      if (active.length === 0) {
        void vscode.window.showInformationMessage('AgentCanvas: no run is active.');
        return;
      }
      if (active.length === 1) runId = active[0][0];
      else runId = (await vscode.window.showQuickPick(active.map(([id, flow]) => ({ label: flow || id, description: id, id })), { placeHolder: 'Stop which run?' }))?.id;
    }
    if (!runId) return;
    await this.sidecar.request(Method.stopRun, { runId });
    this.log.info(`asked to stop run ${runId}`);
  }

  private async showRunLog(arg?: unknown): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) return;
    const a = arg as { run?: { runId?: string; flow?: string }; runId?: string; flow?: string } | undefined;
    const runId = a?.run?.runId ?? a?.runId;
    const flowPath = a?.run?.flow ?? a?.flow;
    const logs = await vscode.workspace.findFiles('.agentcanvas/logs/*/*.jsonl', undefined, 1000);
    if (logs.length === 0) {
      void vscode.window.showInformationMessage('AgentCanvas: no run logs yet (.agentcanvas/logs/ is empty).');
      return;
    }
    // The log folder is named after the flow; prefer that flow's newest file.
    const flowName = flowPath ? path.basename(flowPath).replace(/\.ya?ml$/, '') : undefined;
    const sorted = logs.sort((x, y) => y.fsPath.localeCompare(x.fsPath));
    const mine = flowName ? sorted.filter((u) => path.basename(path.dirname(u.fsPath)) === flowName) : [];
    let file: vscode.Uri | undefined = mine[0];
    if (!file) {
      file = (
        await vscode.window.showQuickPick(
          sorted.map((u) => ({ label: vscode.workspace.asRelativePath(u), uri: u })),
          { placeHolder: 'Which run log?' },
        )
      )?.uri;
    }
    if (file) await RunLogPanel.show(file, runId);
  }
}

// Activation: the output channel, the status item, the sidecar client, the views and commands,
// and the human-in-the-loop queue. Everything that talks to the sidecar goes through SidecarClient.
import * as vscode from 'vscode';
import { Log } from './log';
import { StatusItem } from './status';
import { SidecarClient, withSidecar } from './sidecar';
import { Method, Notification, readRunEvent, type PendingRequest } from './protocol';
import { registerFlowCommands } from './commands/flowCommands';
import { RunController } from './commands/runCommands';
import { ForkController, readTurns } from './commands/forkCommands';
import { ProposalController } from './commands/proposalCommands';
import { ReviewController } from './commands/reviewCommands';
import { actionable, needsMenu, needsOf, NeedsYouTree } from './views/needsYouTree';
import { RunsModel } from './views/runsModel';
import { RunsTree } from './views/runsTree';
import { ProposalsTree } from './views/proposalsTree';
import { LineOriginsHover } from './views/lineOrigins';
import { PendingQueue } from './hitl/pending';
import { askUser } from './hitl/prompts';
import { promptKind, secretKey, sidecarValueCheck } from './hitl/requests';
import { isFlowPath } from './flows';
import { registerSkills } from './skills/skillsView';
import { createCanvasBackend, type CanvasBackendImpl } from './canvasBackend';
import { CanvasEditorProvider, type CanvasBackend } from './canvas';
import { noLinks } from './views/markdownText';

let sidecar: SidecarClient | undefined;
const STORED_KEYS = 'agentcanvas.storedSecretKeys';

export interface AgentCanvasApi {
  /** The running client, for tests. */
  sidecar: SidecarClient;
  /** The canvas custom editor's backend (registered below; exported for tests). */
  canvasBackend: CanvasBackendImpl;
}

export async function activate(context: vscode.ExtensionContext): Promise<AgentCanvasApi> {
  const log = new Log(vscode.window.createOutputChannel('AgentCanvas', { log: true }));
  const status = new StatusItem();
  const client = new SidecarClient(context, log, status);
  sidecar = client;
  context.subscriptions.push(log, status, client);

  // Human in the loop
  const root = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  // The value is sent to the sidecar to be checked: registered first, so no trace shows it.
  const valueCheck = sidecarValueCheck((method, params) => {
    const value = (params as { value?: unknown }).value;
    if (typeof value === 'string' && value !== '') log.addSecret(value);
    return client.request(method, params);
  });
  const pending = new PendingQueue({
    ask: (p) => askUser(p, { secrets: context.secrets, workspaceRoot: root(), check: valueCheck }),
    send: (method, params) => {
      // registered before sending: a trace of the request must not show the value either
      const value = (params as { value?: unknown }).value;
      if (method === Method.provideDependency && typeof value === 'string') log.addSecret(value);
      return client.request(method, params);
    },
    onSecretProvided: async (p, value) => {
      if (p.kind !== 'dependency' || promptKind(p.dependency.type) !== 'secret') return;
      log.addSecret(value);
      await context.secrets.store(secretKey(p.dependency), value);
      // SecretStorage cannot list its keys in VS Code 1.91: remember the names (never values).
      const names = context.globalState.get<string[]>(STORED_KEYS, []);
      if (!names.includes(secretKey(p.dependency))) await context.globalState.update(STORED_KEYS, [...names, secretKey(p.dependency)]);
      log.info(`provided ${p.dependency.type} ${p.dependency.name} to ${p.agentId ?? 'the agent'} (value kept in secret storage)`);
    },
    error: (m) => {
      log.error(m);
      void vscode.window.showErrorMessage(`AgentCanvas: ${noLinks(m)}`);
    },
  });
  context.subscriptions.push(pending, pending.onDidChange(() => status.setPending(pending.size)));

  // Runs
  const runsTree = new RunsTree(new RunsModel(), readTurns);
  const runs = new RunController(client, log, runsTree, pending, status, async (names) => {
    const env: Record<string, string> = {};
    for (const name of names) {
      for (const type of ['env_variable', 'api_key'] as const) {
        const v = await context.secrets.get(secretKey({ type, name }));
        if (v !== undefined) {
          log.addSecret(v);
          env[name] = v;
          break;
        }
      }
    }
    return env;
  });
  context.subscriptions.push(vscode.window.createTreeView('agentcanvas.runs', { treeDataProvider: runsTree, showCollapseAll: true }), ...runs.register());
  const forks = new ForkController(client, log, runsTree.model, () => runs.refresh(), (uri) => runs.envFor(uri));
  context.subscriptions.push(...forks.register());

  // Proposals
  const proposalsTree = new ProposalsTree();
  const proposals = new ProposalController(client, log, proposalsTree);
  const proposalsView = vscode.window.createTreeView('agentcanvas.proposals', { treeDataProvider: proposalsTree, manageCheckboxStateManually: true, showCollapseAll: true });
  context.subscriptions.push(proposalsView, proposals.attach(proposalsView), ...proposals.register());
  // Review comments on proposals' lines, sent back to their workers (Request Changes).
  const review = new ReviewController(client, log, proposalsTree, () => proposals.refresh());
  context.subscriptions.push(...review.register(), proposals.onDidRefresh(() => review.sync()));
  // Needs You: everything waiting for the person, across runs; its count is the status bar's bell.
  const needsTree = new NeedsYouTree();
  const needsView = vscode.window.createTreeView('agentcanvas.needsYou', { treeDataProvider: needsTree });
  const updateNeeds = () => {
    const needs = needsOf(pending.list(), proposalsTree.proposals);
    needsTree.set(needs);
    const n = actionable(needs);
    needsView.badge = n > 0 ? { value: n, tooltip: `${n} thing(s) need you` } : undefined;
    status.setOtherNeeds(n - pending.size);
  };
  context.subscriptions.push(needsView, pending.onDidChange(updateNeeds), proposals.onDidRefresh(updateNeeds));
  const proposalWatcher = vscode.workspace.createFileSystemWatcher('**/.agentcanvas/sandboxes/*/*/proposal/proposal.json');
  const onProposalFiles = () => void proposals.refresh();
  context.subscriptions.push(proposalWatcher, proposalWatcher.onDidCreate(onProposalFiles), proposalWatcher.onDidChange(onProposalFiles), proposalWatcher.onDidDelete(onProposalFiles));
  // Where a line came from: lines agents wrote, from the apply ledger.
  context.subscriptions.push(LineOriginsHover.register(client, log));

  // Flows
  context.subscriptions.push(...registerFlowCommands(client, log));
  const setFlowContext = () =>
    void vscode.commands.executeCommand('setContext', 'agentcanvas.activeFlowFile', !!vscode.window.activeTextEditor && isFlowPath(vscode.window.activeTextEditor.document.uri.fsPath));
  context.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(setFlowContext));
  setFlowContext();

  // Sidecar notifications
  let offeredResume = false;
  context.subscriptions.push(
    client.onNotification(Notification.runEvent, (raw) => {
      const ev = readRunEvent(raw);
      if (ev) runs.onRunEvent(ev);
      if (ev) review.onRunEvent(ev);
    }),
    client.onNotification(Notification.proposalChanged, onProposalFiles),
    client.onDidChangeRunning((up) => {
      if (!up) return;
      void proposals.refresh(); // the sidecar's review: collisions and merges
      // re-fetch pending requests: they survive a reload or a restart
      void runs.refresh().then(() => {
        // the first time after activation (a window reload): one notification for the runs
        // the reload interrupted, however many
        if (offeredResume) return;
        offeredResume = true;
        return runs.offerResume();
      });
    }),
  );

  context.subscriptions.push(
    vscode.commands.registerCommand('agentcanvas.restartSidecar', () => client.restart()),
    vscode.commands.registerCommand('agentcanvas.showLog', () => log.show()),
    vscode.commands.registerCommand('agentcanvas.answerPending', async (p?: PendingRequest) => {
      if (pending.size === 0) {
        void vscode.window.showInformationMessage('AgentCanvas: no agent is waiting for an answer.');
        return;
      }
      await pending.promptNext(p && typeof p === 'object' && 'requestId' in p ? p : undefined);
    }),
    vscode.commands.registerCommand('agentcanvas.forgetSecrets', async () => {
      const ours = context.globalState.get<string[]>(STORED_KEYS, []);
      if (ours.length === 0) {
        void vscode.window.showInformationMessage('AgentCanvas: no stored values.');
        return;
      }
      const picked = await vscode.window.showQuickPick(
        ours.map((k) => ({ label: k.replace('agentcanvas.dependency.', ''), key: k, picked: true })),
        { canPickMany: true, placeHolder: 'Forget which stored values?' },
      );
      for (const p of picked ?? []) await context.secrets.delete(p.key);
      const gone = new Set((picked ?? []).map((p) => p.key));
      await context.globalState.update(STORED_KEYS, ours.filter((k) => !gone.has(k)));
    }),
    vscode.commands.registerCommand('agentcanvas.statusMenu', async () => {
      type Item = vscode.QuickPickItem & { run: () => unknown };
      const items: Item[] = [];
      // What the bell counts, kind by kind (the counts add up to the bell's number).
      for (const m of needsMenu(needsTree.needs)) {
        const cmd = m.first.command;
        const isRequest = m.first.kind === 'question' || m.first.kind === 'dependency';
        items.push({
          label: `$(bell) ${m.label}`,
          run: () => (isRequest ? pending.promptNext() : cmd ? vscode.commands.executeCommand(cmd.id, ...(cmd.arg === undefined ? [] : [cmd.arg])) : undefined),
        });
      }
      if (needsTree.needs.length > 0) items.push({ label: '$(checklist) Show Needs You', run: () => vscode.commands.executeCommand('agentcanvas.needsYou.focus') });
      items.push({ label: '$(output) Show Log', run: () => log.show() });
      items.push({ label: '$(debug-restart) Restart Sidecar', run: () => client.restart() });
      if (status.runningFlows.length > 0 || runsTree.model.all().some((r) => r.status === 'running' || r.status === 'waiting')) {
        items.push({ label: '$(debug-stop) Stop Run…', run: () => vscode.commands.executeCommand('agentcanvas.stopRun') });
      }
      items.push({ label: '$(list-tree) Show Runs', run: () => vscode.commands.executeCommand('agentcanvas.runs.focus') });
      const pick = await vscode.window.showQuickPick(items, { placeHolder: `AgentCanvas${client.version ? ` ${client.version}` : ''}` });
      await pick?.run();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('agentcanvas.sidecarPath')) void client.restart();
    }),
  );

  // Skills
  registerSkills(context, (s) => withSidecar(client, log, () => runs.invokeSkill(s)));

  const canvasBackend = createCanvasBackend(client, (listener) =>
    client.onNotification(Notification.runEvent, (raw) => {
      const ev = readRunEvent(raw);
      if (ev) listener(ev);
    }),
  );

  // The canvas: the flow file's TextDocument is the model; edits go through the sidecar.
  context.subscriptions.push(CanvasEditorProvider.register(context, canvasBackend as unknown as CanvasBackend, log.channel));

  void proposals.refresh();
  await client.start();
  return { sidecar: client, canvasBackend };
}

export async function deactivate(): Promise<void> {
  await sidecar?.stop();
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunsModel, statusIcon } from '../../src/views/runsModel';
import { filterEvents, metrics, parseJsonl } from '../../src/views/runLogModel';
import { renderStatus } from '../../src/status';
import { readRuns } from '../../src/protocol';
import { RunsTree } from '../../src/views/runsTree';

test('runs model: events build runs → interactions → agents with status and termination reason', () => {
  const m = new RunsModel();
  assert.equal(m.apply({ runId: 'r1', flow: 'flows/debate.yaml', event: 'run_started' }), true, 'an unknown run asks for a refresh');
  m.apply({ runId: 'r1', event: 'configured', interactionId: 'i1', data: { patternId: 'debate_judge' } });
  m.apply({ runId: 'r1', event: 'agent_started', interactionId: 'i1', agentId: 'pro', round: 0, data: { role: 'debater' } });
  // the engine's round (completed rounds when the turn began, from 0), never its step count
  m.apply({ runId: 'r1', event: 'step', interactionId: 'i1', agentId: 'con', step: 2, round: 0 });
  assert.equal(m.get('r1')!.interactions[0].round, 1, 'two steps of the first round: round 1');
  m.apply({ runId: 'r1', event: 'step', interactionId: 'i1', agentId: 'con', step: 3, round: 1 });
  m.apply({ runId: 'r1', event: 'question_asked', interactionId: 'i1', agentId: 'con', data: { id: 'q' } });
  let r = m.get('r1')!;
  assert.equal(r.interactions[0].patternId, 'debate_judge');
  assert.equal(r.interactions[0].round, 2);
  assert.deepEqual(r.interactions[0].agents.map((a) => [a.id, a.role, a.status]), [['pro', 'debater', 'running'], ['con', undefined, 'waiting']]);
  m.apply({ runId: 'r1', event: 'terminated', interactionId: 'i1', reason: 'judge_decision', rounds: 1 });
  assert.equal(m.get('r1')!.interactions[0].round, 1, 'the rounds the engine completed, as it ended');
  m.apply({ runId: 'r1', event: 'run_stopped', reason: 'stopped by the user' });
  r = m.get('r1')!;
  assert.equal(r.interactions[0].status, 'terminated');
  assert.equal(r.interactions[0].terminationReason, 'judge_decision');
  assert.equal(r.status, 'stopped');
  assert.equal(r.terminationReason, 'stopped by the user');
  assert.deepEqual(r.interactions[0].agents.map((a) => a.status), ['stopped', 'stopped'], 'agents still running when the run stops are stopped');
  assert.equal(statusIcon('waiting'), 'bell');
});

test('runs tree: pending requests first, then interactions; an empty tree explains itself', () => {
  const m = new RunsModel();
  const t = new RunsTree(m);
  const empty = t.getChildren();
  assert.equal(empty[0].kind, 'message');
  m.replace([{ runId: 'r1', flow: 'f', status: 'waiting', interactions: [{ id: 'i1', status: 'running', agents: [{ id: 'a', status: 'waiting' }] }], pending: [{ kind: 'question', runId: 'r1', requestId: 'q', question: { question: 'ok?' } }] }]);
  const [run] = t.getChildren();
  const kids = t.getChildren(run);
  assert.deepEqual(kids.map((k) => k.kind), ['pending', 'interaction', 'turns']);
  const item = t.getTreeItem(kids[0]);
  assert.equal(item.command?.command, 'agentcanvas.answerPending');
  assert.equal(t.getTreeItem(run).contextValue, 'run.active');
});

const jsonl = [
  '{"ts": 1000, "flow": "team", "runId": "r1", "interactionId": "i1", "edgeId": "e1", "event": "configured", "data": {}}',
  '{"ts": 2000, "flow": "team", "runId": "r1", "interactionId": "i1", "edgeId": "e1", "event": "step", "step": 1, "from": "debater_a", "to": "judge", "note": "opening"}',
  'not json',
  '{"ts": 3500, "flow": "team", "runId": "r1", "interactionId": "i1", "event": "step", "step": 2, "from": "debater_b", "to": "judge"}',
  '{"ts": 4000, "flow": "team", "runId": "r1", "interactionId": "i1", "edgeId": "e1", "event": "terminated", "reason": "judge_decision"}',
  '{"ts": 5000, "flow": "team", "runId": "r2", "event": "proposal_created", "agentId": "coder"}',
  '[1,2]',
  '',
].join('\n');

test('run log: JSONL parsed with bad lines reported by number', () => {
  const p = parseJsonl(jsonl);
  assert.equal(p.events.length, 5);
  assert.deepEqual(p.errors.map((e) => e.line), [3, 7]);
});

test('run log: filters and metrics', () => {
  const { events } = parseJsonl(jsonl);
  assert.equal(filterEvents(events, { runId: 'r1' }).length, 4);
  assert.equal(filterEvents(events, { events: ['step'], agent: 'judge' }).length, 2);
  assert.equal(filterEvents(events, { text: 'OPENING' }).length, 1);
  const m = metrics(filterEvents(events, { runId: 'r1' }));
  assert.equal(m.steps, 2);
  assert.deepEqual(m.messagesByAgent, { debater_a: 1, debater_b: 1 });
  assert.deepEqual(m.terminations, [{ interactionId: 'i1', reason: 'judge_decision' }]);
  assert.equal(m.durationMs, 3000);
  assert.equal(metrics(events).proposals.created, 1);
  assert.deepEqual(metrics(events).runs, ['r1', 'r2']);
});

test('status item: client state and sidecar health', () => {
  assert.equal(renderStatus('starting', undefined, 0).text, '$(sync~spin) AgentCanvas');
  const healthy = renderStatus('running', { health: 'ok', runningFlows: [] }, 0);
  assert.deepEqual(healthy, { text: '$(check) AgentCanvas', tooltip: 'AgentCanvas sidecar: healthy' });
  const busy = renderStatus('running', { health: 'warning', message: 'not watching', runningFlows: [{ runId: '', flow: 'team.yaml' }] }, 2);
  assert.equal(busy.text, '$(warning) AgentCanvas $(play) 1 $(bell) 2');
  assert.equal(busy.background, 'statusBarItem.warningBackground');
  assert.match(busy.tooltip, /running: team\.yaml\n2 request\(s\) waiting for you/);
  assert.equal(renderStatus('failed', undefined, 0).background, 'statusBarItem.errorBackground');
});

test("runs model: the engine's event fields (agent, status, error)", () => {
  const m = new RunsModel();
  m.apply({ runId: 'r2', flow: 'team', event: 'run_started' });
  m.apply({ runId: 'r2', event: 'interaction_started', interactionId: 'i1', patternId: 'manager_worker' });
  m.apply({ runId: 'r2', event: 'agent_started', interactionId: 'i1', agent: 'lead' });
  m.apply({ runId: 'r2', event: 'question_asked', interactionId: 'i1', agent: 'lead', id: 'q1' });
  assert.equal(m.get('r2')!.interactions[0].agents[0].status, 'waiting');
  m.apply({ runId: 'r2', event: 'question_answered', interactionId: 'i1', agent: 'lead', id: 'q1', outcome: 'answered' });
  m.apply({ runId: 'r2', event: 'agent_finished', interactionId: 'i1', agent: 'lead', status: 'failed', error: 'exit status 3' });
  const a = m.get('r2')!.interactions[0].agents[0];
  assert.deepEqual([a.status, a.terminationReason], ['failed', 'exit status 3']);
  m.apply({ runId: 'r2', event: 'run_finished', status: 'failed', reason: 'interaction i1 failed' });
  assert.deepEqual([m.get('r2')!.status, m.get('r2')!.terminationReason], ['failed', 'interaction i1 failed']);
});

// The Runs view showed an agent "running" under a completed run: the engine reports a request's
// resolution from its own goroutine, so question_answered (a request cancelled when the run
// ended is "answered" with a failure) can arrive after agent_finished and after run_finished.
test('runs model: a run that is over shows nothing running, whatever arrives late', () => {
  const m = new RunsModel();
  m.apply({ runId: 'r3', flow: 'ask', event: 'run_started' });
  m.apply({ runId: 'r3', event: 'agent_started', interactionId: 'i1', agent: 'coder' });
  m.apply({ runId: 'r3', event: 'question_asked', interactionId: 'i1', agent: 'coder', id: 'q1' });
  m.apply({ runId: 'r3', event: 'agent_finished', interactionId: 'i1', agent: 'coder', status: 'completed' });
  // the request's goroutine reports after the turn ended: the agent stays completed
  m.apply({ runId: 'r3', event: 'question_answered', interactionId: 'i1', agent: 'coder', id: 'q1', outcome: 'answered' });
  const coder = () => m.get('r3')!.interactions[0].agents[0];
  assert.equal(coder().status, 'completed');
  // an agent whose last turn had no agent_finished, and a run that completes
  m.apply({ runId: 'r3', event: 'agent_started', interactionId: 'i1', agent: 'reviewer' });
  m.apply({ runId: 'r3', event: 'run_finished', status: 'completed', reason: '' });
  const r = m.get('r3')!;
  assert.equal(r.status, 'completed');
  assert.deepEqual(r.interactions.map((i) => i.status), ['completed']);
  assert.deepEqual(r.interactions[0].agents.map((a) => [a.id, a.status]), [['coder', 'completed'], ['reviewer', 'completed']]);
  // events after run_finished finish nothing again and revive nothing
  m.apply({ runId: 'r3', event: 'question_asked', interactionId: 'i1', agent: 'reviewer', id: 'q2' });
  m.apply({ runId: 'r3', event: 'question_answered', interactionId: 'i1', agent: 'reviewer', id: 'q2', outcome: 'failed: context canceled' });
  m.apply({ runId: 'r3', event: 'agent_started', interactionId: 'i1', agent: 'coder' });
  m.apply({ runId: 'r3', event: 'step', interactionId: 'i2', agent: 'late', step: 1 });
  assert.deepEqual(
    r.interactions.flatMap((i) => [[i.id, i.status], ...i.agents.map((a) => [a.id, a.status])]),
    [['i1', 'completed'], ['coder', 'completed'], ['reviewer', 'completed'], ['i2', 'completed'], ['late', 'completed']],
  );
  assert.equal(statusIcon(r.interactions[0].agents[1].status), 'pass');
});

test('runs model: run_interrupted ends what was under way and keeps the requests; run_resumed starts again', () => {
  const m = new RunsModel();
  m.apply({ runId: 'r4', flow: 'ask', event: 'run_started' });
  m.apply({ runId: 'r4', event: 'agent_started', interactionId: 'i1', agent: 'coder' });
  m.apply({ runId: 'r4', event: 'question_asked', interactionId: 'i1', agent: 'coder', id: 'q1' });
  const r = m.get('r4')!;
  r.pending = [{ kind: 'question', runId: 'r4', requestId: 'q1', agentId: 'coder', question: { question: 'Which?' } }];
  m.apply({ runId: 'r4', event: 'run_interrupted', reason: 'the session ended' });
  assert.deepEqual([r.status, r.interactions[0].status, r.interactions[0].agents[0].status, r.pending.length], ['interrupted', 'interrupted', 'interrupted', 1]);
  m.apply({ runId: 'r4', event: 'run_resumed' });
  m.apply({ runId: 'r4', event: 'agent_started', interactionId: 'i1', agent: 'coder' });
  assert.deepEqual([r.status, r.interactions[0].agents[0].status], ['running', 'running']);
});

test("runs model and tree: spend events show the run's and each interaction's spend so far", () => {
  const m = new RunsModel();
  m.apply({ runId: 'r1', flow: 'debate', event: 'run_started' });
  m.apply({ runId: 'r1', event: 'spend', interactionId: 'i1', agent: 'pro', tokens: 1200, costUsd: 0.01, run: { tokens: 1200, costUsd: 0.01, costKnown: true }, interaction: { tokens: 1200, costUsd: 0.01, costKnown: true } });
  m.apply({ runId: 'r1', event: 'spend', interactionId: 'i2', agent: 'judge', unreported: true, run: { tokens: 1200, costUsd: 0.01, costKnown: true, unreported: ['judge'] }, interaction: { tokens: 0, costUsd: 0, costKnown: true, unreported: ['judge'] } });
  m.apply({ runId: 'r1', event: 'terminated', interactionId: 'i1', reason: 'max_tokens', spend: { tokens: 1500, costUsd: 0.012, costKnown: true } });
  const r = m.get('r1')!;
  assert.deepEqual(r.spend, { tokens: 1200, costUsd: 0.01, costKnown: true, unreported: ['judge'] });
  assert.equal(r.interactions[0].spend?.tokens, 1500, "terminated carries the interaction's final spend");
  const tree = new RunsTree(m);
  const [run] = tree.getChildren();
  assert.match(String(tree.getTreeItem(run).description), /1\.2k tokens · \$0\.01 · usage unknown: judge/);
  assert.match(String(tree.getTreeItem(run).tooltip), /spent: 1\.2k tokens/);
  const inter = tree.getChildren(run).find((n) => n.kind === 'interaction' && n.interaction.id === 'i1')!;
  assert.match(String(tree.getTreeItem(inter).description), /reason: max_tokens · 1\.5k tokens · \$0\.01/);
  m.apply({ runId: 'r1', event: 'run_finished', status: 'stopped', reason: 'budget', spend: { tokens: 5200, costUsd: 0.052, costKnown: true, unreported: ['judge'] } });
  assert.equal(m.get('r1')!.spend?.tokens, 5200, "run_finished carries the run's final spend");
});

test('runs model and tree: each agent shows its spend as it accrues, a metered turn counted once', () => {
  const m = new RunsModel();
  m.apply({ runId: 'r1', flow: 'review', event: 'run_started' });
  m.apply({ runId: 'r1', event: 'agent_started', interactionId: 'i1', agent: 'coder' });
  // two metered calls mid-turn (the gateway), then the turn's own report repeating them
  m.apply({ runId: 'r1', event: 'spend', interactionId: 'i1', data: { agent: 'coder', midTurn: true, callTokens: 1000, callCostUsd: 0.01 } });
  const tree = new RunsTree(m);
  const agentItem = (id: string) => {
    const [run] = tree.getChildren();
    const inter = tree.getChildren(run).find((n) => n.kind === 'interaction')!;
    return tree.getTreeItem(tree.getChildren(inter).find((n) => n.kind === 'agent' && n.agent.id === id)!);
  };
  assert.equal(agentItem('coder').description, 'running · 1k tokens · $0.01', 'shown during the turn, after the first call');
  m.apply({ runId: 'r1', event: 'spend', interactionId: 'i1', data: { agent: 'coder', midTurn: true, callTokens: 500, callCostUsd: 0.02 } });
  m.apply({ runId: 'r1', event: 'agent_finished', interactionId: 'i1', agent: 'coder', data: { inputTokens: 1200, outputTokens: 300, costUsd: 0.03 } });
  m.apply({ runId: 'r1', event: 'spend', interactionId: 'i1', data: { agent: 'coder', gateway: true, tokens: 1500, costUsd: 0.03 } });
  const coder = m.get('r1')!.interactions[0].agents[0];
  assert.deepEqual([coder.spend?.tokens, coder.spend?.costUsd.toFixed(2)], [1500, '0.03'], "the metered turn's report is not counted twice");
  assert.equal(agentItem('coder').description, 'finished · 1.5k tokens · $0.03');
  assert.match(String(agentItem('coder').tooltip), /spent: 1\.5k tokens · \$0\.03 \(metered by the model gateway/);
  // an agent the gateway does not meter: its finished turns' reports add up; one that reports nothing is unknown
  m.apply({ runId: 'r1', event: 'spend', interactionId: 'i1', agent: 'tester', tokens: 800, costUsd: 0.004 });
  m.apply({ runId: 'r1', event: 'spend', interactionId: 'i1', agent: 'tester', tokens: 200 });
  m.apply({ runId: 'r1', event: 'spend', interactionId: 'i1', agent: 'judge', unreported: true });
  assert.match(String(agentItem('tester').description), /1k tokens · ≥ \$0\.0040$/, 'a turn without its cost makes the cost a lower bound');
  assert.match(String(agentItem('judge').description), /spend unknown$/);
  // a re-fetch of the runs (a new run started) keeps what the events told
  m.replace([{ runId: 'r1', flow: 'review', status: 'running', interactions: [{ id: 'i1', status: 'running', agents: [{ id: 'coder', status: 'running' }] }], pending: [] }]);
  assert.equal(m.get('r1')!.interactions[0].agents[0].spend?.tokens, 1500);
});

test('runs model and tree: after a reload each agent shows its spend from listRuns, and later events are not added twice', () => {
  // listRuns of a fresh sidecar: the run's checkpoint with each agent's total (agentSpend)
  const listed = {
    runId: 'r1', flow: 'review', status: 'interrupted', spend: { tokens: 2300, costUsd: 0.034, costKnown: true },
    interactions: [{ id: 'i1', patternId: 'critic_loop', status: 'completed', rounds: 2 }],
    agentSpend: {
      coder: { tokens: 1500, costUsd: 0.03, costKnown: true, metered: true, reports: 2, interaction: 'i1' },
      tester: { tokens: 800, costUsd: 0.004, costKnown: true, reports: 1, interaction: 'i2' },
      judge: { tokens: 0, costUsd: 0, costKnown: true, unreported: true, reports: 1, interaction: 'i2' },
      bogus: { tokens: 5 }, // no report count: not a total the sidecar wrote
    },
    pending: [],
  };
  const m = new RunsModel();
  m.replace(readRuns([listed]));
  const tree = new RunsTree(m);
  const agentItem = (id: string) => {
    const [run] = tree.getChildren();
    for (const inter of tree.getChildren(run)) {
      const a = tree.getChildren(inter).find((n) => n.kind === 'agent' && n.agent.id === id);
      if (a) return tree.getTreeItem(a);
    }
    return undefined;
  };
  assert.equal(agentItem('coder')?.description, 'finished · 1.5k tokens · $0.03', 'under its interaction, as the live view showed it');
  assert.match(String(agentItem('coder')?.tooltip), /metered by the model gateway/);
  assert.equal(agentItem('tester')?.description, 'interrupted · 800 tokens · $0.0040', 'an interaction still under way when the run was interrupted is listed');
  assert.match(String(agentItem('judge')?.description), /spend unknown$/);
  assert.equal(agentItem('bogus'), undefined);
  // the run resumed: a metered call's event carries the coder's new total (3 reports)
  m.apply({ runId: 'r1', event: 'run_resumed' });
  m.apply({ runId: 'r1', event: 'spend', interactionId: 'i1', data: { agent: 'coder', midTurn: true, callTokens: 500, callCostUsd: 0.01, agentTotal: { tokens: 2000, costUsd: 0.04, costKnown: true, metered: true, reports: 3 } } });
  assert.match(String(agentItem('coder')?.description), /2k tokens · \$0\.04$/, 'the new total, not 1.5k + 2k');
  // an event the checkpoint already counted, delivered late (2 reports), changes nothing
  m.apply({ runId: 'r1', event: 'spend', interactionId: 'i1', data: { agent: 'coder', gateway: true, tokens: 1500, costUsd: 0.03, agentTotal: { tokens: 1500, costUsd: 0.03, costKnown: true, metered: true, reports: 2 } } });
  assert.match(String(agentItem('coder')?.description), /2k tokens · \$0\.04$/);
  // a tester turn's report after the restore: its total is taken
  m.apply({ runId: 'r1', event: 'spend', interactionId: 'i2', data: { agent: 'tester', tokens: 200, costUsd: 0.001, agentTotal: { tokens: 1000, costUsd: 0.005, costKnown: true, reports: 2 } } });
  assert.match(String(agentItem('tester')?.description), /1k tokens · \$0\.0050$/);
  // a re-fetch returns the older checkpoint: the newer totals and the statuses the events told
  // are kept, and an agent that has spent nothing yet stays listed
  m.apply({ runId: 'r1', event: 'agent_started', interactionId: 'i1', agent: 'coder' });
  m.apply({ runId: 'r1', event: 'agent_started', interactionId: 'i1', agent: 'planner' });
  m.replace(readRuns([{ ...listed, status: 'running' }]));
  assert.equal(agentItem('coder')?.description, 'running · 2k tokens · $0.04');
  assert.equal(agentItem('planner')?.description, 'running');
  assert.match(String(agentItem('tester')?.description), /1k tokens · \$0\.0050$/);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyFlowYaml, isFlowPath, validateFlowName } from '../../src/flows';

test('flow files are .agentcanvas/flows/*.yaml and flows/*.yaml, nothing deeper', () => {
  assert.equal(isFlowPath('/ws/.agentcanvas/flows/team.yaml'), true);
  assert.equal(isFlowPath('/ws/flows/team.yaml'), true);
  assert.equal(isFlowPath('C:\\ws\\flows\\team.yaml'), true);
  assert.equal(isFlowPath('/ws/flows/sub/team.yaml'), false);
  assert.equal(isFlowPath('/ws/flows/team.yml'), false);
  assert.equal(isFlowPath('/ws/myflows/team.yaml'), false);
});

test('flow names become file names', () => {
  assert.equal(validateFlowName('team-alpha_2'), undefined);
  assert.match(validateFlowName('') ?? '', /name/);
  assert.match(validateFlowName('../evil') ?? '', /letters/);
  assert.match(validateFlowName('a b') ?? '', /letters/);
  assert.match(validateFlowName('x'.repeat(81)) ?? '', /80/);
});

test('an empty flow has the sections of the flow format (docs/flow-format.md)', () => {
  assert.equal(emptyFlowYaml('demo'), 'version: 0.2\nname: demo\n\nagents: []\n\ninteractions: []\n\nlayout:\n  nodes: {}\n  edges: {}\n');
});

test('Open Canvas uses the view type the canvas registers for each folder', async () => {
  const { canvasViewType } = await import('../../src/commands/flowCommands');
  const { Uri } = await import('./vscode-mock');
  assert.equal(canvasViewType(Uri.file('/ws/.agentcanvas/flows/a.yaml') as never), 'agentcanvas.canvas');
  assert.equal(canvasViewType(Uri.file('/ws/flows/a.yaml') as never), 'agentcanvas.canvas.flows');
});

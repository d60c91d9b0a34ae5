// Before a real run: `agentcanvas doctor --json FLOW` (the sidecar's own check of what the
// flow's agents need: their CLIs installed and logged in, git), so a missing CLI or login is
// found before the run starts, not at an agent's first turn.
import { execFile } from 'node:child_process';

export interface DoctorCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  fix?: string;
  backend?: string;
}

export interface DoctorReport {
  ready: boolean;
  checks: DoctorCheck[];
}

/** The report of `binary doctor --json flowPath`; undefined when the check itself could not run. */
export function runDoctor(binary: string, flowPath: string, backend: string | undefined, timeoutMs = 30_000): Promise<DoctorReport | undefined> {
  const args = ['doctor', '--json', ...(backend && backend !== 'auto' ? ['--backend', backend] : [flowPath])];
  return new Promise((resolve) => {
    execFile(binary, args, { timeout: timeoutMs }, (_err, stdout) => {
      // exit 1 means "not ready" and still prints the report
      try {
        const r = JSON.parse(stdout) as DoctorReport;
        resolve(Array.isArray(r.checks) ? r : undefined);
      } catch {
        resolve(undefined);
      }
    });
  });
}

/** The problems worth stopping for, one line each with the command that fixes it. */
export function problemLines(r: DoctorReport): string[] {
  return r.checks.filter((c) => c.status === 'fail').map((c) => `${c.name}: ${c.detail}${c.fix ? ` — fix: ${c.fix}` : ''}`);
}

/** The human report of `binary doctor` (every CLI), for the Check Agent CLIs command. */
export function doctorText(binary: string, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve) => {
    execFile(binary, ['doctor'], { timeout: timeoutMs }, (err, stdout, stderr) => {
      resolve(stdout || stderr || (err ? `agentcanvas doctor could not run: ${err.message}` : ''));
    });
  });
}

// Finding the sidecar binary, in a fixed order (the rust-analyzer bootstrap.ts habit):
//   1. the setting agentcanvas.sidecarPath
//   2. the environment variable AGENTCANVAS_SIDECAR
//   3. the binary bundled with the extension for this platform: bin/<platform>-<arch>/agentcanvas[.exe]
//   4. `agentcanvas` on PATH
// Every candidate is checked by running `agentcanvas version`. A path the user named explicitly
// (1 or 2) that does not work is an error, not a reason to silently use another binary.
// The function is pure over its Host so the order is unit-tested without a file system.

import * as path from 'node:path';

export type SidecarSource = 'setting' | 'env' | 'bundled' | 'path';

export interface Sidecar {
  path: string;
  source: SidecarSource;
  version: string;
}

export interface Host {
  platform: NodeJS.Platform;
  arch: string;
  extensionPath: string;
  /** agentcanvas.sidecarPath, unexpanded. */
  setting: string | undefined;
  env: Record<string, string | undefined>;
  homeDir: string;
  /** First workspace folder: relative settings are resolved against it. */
  workspaceFolder: string | undefined;
  isFile(p: string): Promise<boolean>;
  /** Runs `<p> version` and resolves to its stdout; rejects on a non-zero exit or a timeout. */
  runVersion(p: string): Promise<string>;
}

export class SidecarNotFoundError extends Error {
  constructor(
    message: string,
    readonly tried: string[],
  ) {
    super(message);
    this.name = 'SidecarNotFoundError';
  }
}

/** The platform folder name used under bin/, identical to `vsce package --target`. */
export function bundledTarget(platform: NodeJS.Platform, arch: string): string {
  return `${platform}-${arch}`;
}

export function exeName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'agentcanvas.exe' : 'agentcanvas';
}

/** Expands ~ and ${workspaceFolder}; makes a relative path absolute against the workspace folder. */
export function expandPath(p: string, host: Pick<Host, 'homeDir' | 'workspaceFolder' | 'platform'>): string {
  const pp = host.platform === 'win32' ? path.win32 : path.posix;
  let out = p.trim();
  if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) out = pp.join(host.homeDir, out.slice(1));
  if (host.workspaceFolder) out = out.split('${workspaceFolder}').join(host.workspaceFolder);
  if (!pp.isAbsolute(out) && host.workspaceFolder && /[\\/]/.test(out)) out = pp.join(host.workspaceFolder, out);
  return out;
}

/** A version line must name the program: guards against a PATH entry that is some other tool. */
export function parseVersion(stdout: string): string | undefined {
  const line = stdout.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  const m = /^agentcanvas\s+(\S+)/.exec(line.trim());
  return m ? m[1] : undefined;
}

export async function findSidecar(host: Host): Promise<Sidecar> {
  const tried: string[] = [];
  const pp = host.platform === 'win32' ? path.win32 : path.posix;

  const check = async (p: string, source: SidecarSource, explicit: boolean): Promise<Sidecar | undefined> => {
    if (!(await host.isFile(p))) {
      tried.push(`${source}: ${p} (not found)`);
      if (explicit) throw new SidecarNotFoundError(explicitMessage(source, p, 'does not exist'), tried);
      return undefined;
    }
    let out: string;
    try {
      out = await host.runVersion(p);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      tried.push(`${source}: ${p} (\`version\` failed: ${why})`);
      if (explicit) throw new SidecarNotFoundError(explicitMessage(source, p, `failed to run \`version\`: ${why}`), tried);
      return undefined;
    }
    const version = parseVersion(out);
    if (!version) {
      tried.push(`${source}: ${p} (not agentcanvas: ${JSON.stringify(out.slice(0, 80))})`);
      if (explicit) throw new SidecarNotFoundError(explicitMessage(source, p, 'is not an agentcanvas binary'), tried);
      return undefined;
    }
    return { path: p, source, version };
  };

  if (host.setting && host.setting.trim() !== '') {
    return (await check(expandPath(host.setting, host), 'setting', true))!;
  }
  const fromEnv = host.env.AGENTCANVAS_SIDECAR;
  if (fromEnv && fromEnv.trim() !== '') {
    return (await check(expandPath(fromEnv, host), 'env', true))!;
  }
  const bundled = pp.join(host.extensionPath, 'bin', bundledTarget(host.platform, host.arch), exeName(host.platform));
  const b = await check(bundled, 'bundled', false);
  if (b) return b;

  const pathVar = host.env.PATH ?? host.env.Path ?? '';
  const sep = host.platform === 'win32' ? ';' : ':';
  for (const dir of pathVar.split(sep)) {
    if (dir === '') continue;
    const s = await check(pp.join(dir, exeName(host.platform)), 'path', false);
    if (s) return s;
  }
  throw new SidecarNotFoundError(
    'AgentCanvas could not find the agentcanvas sidecar. Set "agentcanvas.sidecarPath", set AGENTCANVAS_SIDECAR, ' +
      'or put agentcanvas on PATH (build it with `make build`).',
    tried,
  );
}

function explicitMessage(source: SidecarSource, p: string, why: string): string {
  const where = source === 'setting' ? 'The setting "agentcanvas.sidecarPath"' : 'The environment variable AGENTCANVAS_SIDECAR';
  return `${where} names ${p}, which ${why}.`;
}

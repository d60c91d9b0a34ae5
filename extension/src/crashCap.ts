// Restarts after a crash, with a cap: at most `max` crashes inside a sliding `windowMs`
// (vscode-go's goLanguageServer.ts habit). Past the cap the sidecar stays down until the user
// restarts it, and the user hears about it once, not once per crash.

export class CrashCap {
  private crashes: number[] = [];

  constructor(
    readonly max = 5,
    readonly windowMs = 3 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a crash; true when another automatic restart is still allowed. */
  recordCrash(): boolean {
    const t = this.now();
    this.crashes = this.crashes.filter((c) => t - c < this.windowMs);
    this.crashes.push(t);
    return this.crashes.length < this.max;
  }

  get recent(): number {
    const t = this.now();
    return this.crashes.filter((c) => t - c < this.windowMs).length;
  }

  /** A user-requested restart starts a fresh budget. */
  reset(): void {
    this.crashes = [];
  }
}

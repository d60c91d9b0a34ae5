// The round an interaction is in, as the run engine counts it. The engine's agent_started and
// step events carry `round`, the rounds it had completed when the turn began (counted from 0),
// and its terminated event `rounds`, the rounds completed in all. People count from 1, so a
// turn of the first round is "round 1", and an interaction that ended after two rounds says
// "round 2". The Runs view and the canvas's run overlay both read rounds here, never from the
// number of messages or steps: the two always show the same number.

/** The fields of a run event the round is read from. */
export interface RoundEvent {
  event: string;
  round?: unknown;
  rounds?: unknown;
}

/** engineRound is the round an event says its interaction is in, or undefined when it says none. */
export function engineRound(ev: RoundEvent): number | undefined {
  if (ev.event === "terminated") return whole(ev.rounds);
  if (ev.event === "agent_started" || ev.event === "step") {
    const r = whole(ev.round);
    return r === undefined ? undefined : r + 1;
  }
  return undefined;
}

function whole(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
}

// A tiny parser the example flow's workers are asked to improve.
export function parseList(input: string): string[] {
  return input.split(",").map((s) => s.trim());
}

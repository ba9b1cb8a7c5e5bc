// The nearest of some names to a mistyped one, for "did you mean" in a tool's argument errors:
// within max(2, length/3) edits (case folded), nearest first, as the daemon's internal/suggest
// (which also takes a name containing the one typed, for its longer lists).

function editDistance(a: string, b: string): number {
  const ra = [...a];
  const rb = [...b];
  let prev = Array.from({ length: rb.length + 1 }, (_, j) => j);
  let cur = new Array<number>(rb.length + 1).fill(0);
  for (let i = 1; i <= ra.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= rb.length; j++) {
      const cost = ra[i - 1] === rb[j - 1] ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[rb.length]!;
}

/** The nearest of names to name, or undefined when none is close. */
function closest(name: string, names: Iterable<string>): string | undefined {
  const low = name.toLowerCase();
  const limit = Math.max(2, Math.floor([...low].length / 3));
  let best: { n: string; d: number } | undefined;
  for (const n of names) {
    const d = editDistance(low, n.toLowerCase());
    if (d > limit) continue;
    if (!best || d < best.d || (d === best.d && n < best.n)) best = { n, d };
  }
  return best?.n;
}

/** ` (did you mean "x"?)` for the nearest of names, or "". */
export function didYouMean(name: string, names: Iterable<string>): string {
  const c = closest(name, names);
  return c === undefined ? "" : ` (did you mean ${JSON.stringify(c)}?)`;
}

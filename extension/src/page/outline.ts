// Pure functions over outline text, shared by the page engine and the service worker (which
// stitches cross-origin frames in and may paginate or diff the stitched result). No DOM here.

/** Two spaces per depth, as in the outline. */
function indentOf(line: string): number {
  let i = 0;
  while (i < line.length && line.charCodeAt(i) === 32) i++;
  return i;
}

/**
 * A page of whole lines starting at `start`, at most maxChars characters (newlines included);
 * always at least one line so a very long line cannot stall the cursor.
 * `full` maps line indexes to a self-contained form of that line (compact table rows that say
 * "same control as the row above" get their full form when they open a page).
 */
export function paginate(
  lines: readonly string[],
  start: number,
  maxChars: number | undefined,
  full?: ReadonlyMap<number, string>,
): { text: string; next?: number } {
  const out: string[] = [];
  let chars = 0;
  let i = start;
  for (; i < lines.length; i++) {
    let line = lines[i] as string;
    if (i === start && full) line = full.get(i) ?? line;
    const add = line.length + (out.length ? 1 : 0);
    if (maxChars !== undefined && out.length > 0 && chars + add > maxChars) break;
    out.push(line);
    chars += add;
  }
  return i < lines.length ? { text: out.join("\n"), next: i } : { text: out.join("\n") };
}

/**
 * Line diff of two outlines: hunks of "- old" / "+ new" lines, each preceded by its nearest
 * unchanged ancestor line ("  " prefix) so the agent knows where the change is.
 * Output lines use the self-contained (`full`) form of compact rows.
 */
export function diffOutlines(
  prev: readonly string[],
  cur: readonly string[],
  prevFull?: ReadonlyMap<number, string>,
  curFull?: ReadonlyMap<number, string>,
): { lines: string[]; added: number; removed: number } {
  let pre = 0;
  while (pre < prev.length && pre < cur.length && prev[pre] === cur[pre]) pre++;
  let suf = 0;
  while (
    suf < prev.length - pre &&
    suf < cur.length - pre &&
    prev[prev.length - 1 - suf] === cur[cur.length - 1 - suf]
  ) suf++;
  const a = prev.slice(pre, prev.length - suf);
  const b = cur.slice(pre, cur.length - suf);
  // ops over the middle: 0 = same, 1 = removed (from a), 2 = added (from b)
  const ops: { op: 0 | 1 | 2; ai: number; bi: number }[] = [];
  const n = a.length;
  const m = b.length;
  if (n * m <= 4_000_000 && n > 0 && m > 0) {
    const w = m + 1;
    const L = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        L[i * w + j] = a[i] === b[j] ? (L[(i + 1) * w + j + 1] as number) + 1 : Math.max(L[(i + 1) * w + j] as number, L[i * w + j + 1] as number);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (a[i] === b[j]) ops.push({ op: 0, ai: i++, bi: j++ });
      else if ((L[(i + 1) * w + j] as number) >= (L[i * w + j + 1] as number)) ops.push({ op: 1, ai: i++, bi: j });
      else ops.push({ op: 2, ai: i, bi: j++ });
    }
    while (i < n) ops.push({ op: 1, ai: i++, bi: j });
    while (j < m) ops.push({ op: 2, ai: i, bi: j++ });
  } else {
    for (let i = 0; i < n; i++) ops.push({ op: 1, ai: i, bi: 0 });
    for (let j = 0; j < m; j++) ops.push({ op: 2, ai: n, bi: j });
  }
  const out: string[] = [];
  let added = 0;
  let removed = 0;
  let k = 0;
  while (k < ops.length) {
    const o = ops[k] as (typeof ops)[number];
    if (o.op === 0) {
      k++;
      continue;
    }
    // New hunk: context = nearest ancestor in the current outline of the first changed line.
    const at = pre + o.bi;
    const firstLine = o.op === 2 ? (cur[at] as string) : (prev[pre + o.ai] as string);
    const ctx = ancestor(cur, at, indentOf(firstLine));
    if (ctx !== undefined) out.push("  " + (curFull?.get(ctx) ?? cur[ctx]));
    const rem: string[] = [];
    const add: string[] = [];
    for (; k < ops.length && (ops[k] as (typeof ops)[number]).op !== 0; k++) {
      const p = ops[k] as (typeof ops)[number];
      if (p.op === 1) rem.push("- " + (prevFull?.get(pre + p.ai) ?? prev[pre + p.ai]));
      else add.push("+ " + (curFull?.get(pre + p.bi) ?? cur[pre + p.bi]));
    }
    removed += rem.length;
    added += add.length;
    out.push(...rem, ...add);
  }
  return { lines: out, added, removed };
}

function ancestor(lines: readonly string[], at: number, indent: number): number | undefined {
  if (indent === 0) return undefined;
  for (let i = Math.min(at, lines.length) - 1; i >= 0; i--) {
    if (indentOf(lines[i] as string) < indent) return i;
  }
  return undefined;
}

/**
 * Inserts each cross-origin frame's outline under its placeholder line, indented one level deeper.
 * `frames` are the placeholders of the parent result; `children` maps placeholder ordinal → outline.
 */
export function stitchFrames(
  parentText: string,
  frames: readonly { frame: number; line: number; depth: number }[],
  children: ReadonlyMap<number, string>,
): string {
  const lines = parentText.split("\n");
  const sorted = [...frames].sort((x, y) => y.line - x.line);
  for (const f of sorted) {
    const child = children.get(f.frame);
    if (child === undefined || child === "" || f.line >= lines.length) continue;
    const pad = "  ".repeat(f.depth + 1);
    const host = lines[f.line] as string;
    if (!host.endsWith(":")) lines[f.line] = host + ":";
    lines.splice(f.line + 1, 0, ...child.split("\n").map((l) => pad + l));
  }
  return lines.join("\n");
}

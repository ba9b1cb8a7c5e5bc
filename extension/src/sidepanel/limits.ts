// What keeps a huge message from freezing the panel: before markdown-it sees the text, table rows
// past TABLE_ROWS_SHOWN and code past CODE_SHOWN characters are cut (markdown-it's table rule
// alone takes seconds on thousands of rows), each cut leaving a sentinel line that the renderer
// turns into a note saying how much is not shown; and the text is split at blank lines into
// chunks the view renders one task at a time. The sentinel carries a nonce made for this render,
// so an author cannot forge a note.

const CODE_SHOWN = 20_000;
const TABLE_ROWS_SHOWN = 100;
/** Below this a message is rendered in one go, untouched. */
const SMALL = 8_000;
/** Markdown per chunk (cut at a blank line outside code). */
const CHUNK = 4_000;

export interface Precut {
  chunks: string[];
  /** The whole text of each cut code block, by the id its sentinel names. */
  codes: string[];
  nonce: string;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

export function precut(src: string): Precut {
  const nonce = `torii-cut-${Math.random().toString(36).slice(2)}`;
  const codes: string[] = [];
  if (src.length < SMALL) return { chunks: [src], codes, nonce };
  const chunks: string[] = [];
  let out: string[] = [];
  let size = 0;
  const push = (l: string) => {
    out.push(l);
    size += l.length + 1;
  };
  const note = (s: string) => {
    push("");
    push(`${nonce}:${s}`);
    push("");
  };
  let fence = "";
  let code: string[] = [];
  let shown = 0;
  let dropped = 0;
  let run = 0;
  let hidden = 0;
  const endRun = () => {
    if (hidden) note(`rows:${hidden}`);
    run = 0;
    hidden = 0;
  };
  const endFence = () => {
    if (dropped) note(`code:${codes.push(code.join("\n")) - 1}:${dropped}`);
    fence = "";
    code = [];
  };
  for (const line of src.split("\n")) {
    const f = FENCE.exec(line)?.[1];
    if (fence) {
      if (f && f[0] === fence[0] && f.length >= fence.length && line.trim() === f) {
        push(line);
        endFence();
        continue;
      }
      code.push(line);
      const room = CODE_SHOWN - shown;
      if (room <= 0) dropped += line.length + 1;
      else if (line.length + 1 <= room) {
        push(line);
        shown += line.length + 1;
      } else {
        push(line.slice(0, room));
        dropped += line.length + 1 - room;
        shown = CODE_SHOWN;
      }
      continue;
    }
    if (f) {
      endRun();
      fence = f;
      shown = 0;
      dropped = 0;
      push(line);
      continue;
    }
    if (line.includes("|") && line.trim() !== "") {
      if (++run > TABLE_ROWS_SHOWN + 2) hidden++;
      else push(line);
      continue;
    }
    endRun();
    push(line);
    if (line.trim() === "" && size > CHUNK) {
      chunks.push(out.join("\n"));
      out = [];
      size = 0;
    }
  }
  if (fence) {
    push(fence); // close it here so the note after it is not code
    endFence();
  }
  endRun();
  if (out.length) chunks.push(out.join("\n"));
  return { chunks, codes, nonce };
}

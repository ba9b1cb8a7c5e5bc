// Key names and combos ("Enter", "Mod+A", "Shift+Tab", "Control+Shift+ArrowLeft") → the CDP
// Input.dispatchKeyEvent parameters Chrome needs (key, code, windowsVirtualKeyCode, text, modifiers).
// Pure: no chrome.* here, so it is unit-tested in node.

export const MOD_ALT = 1;
export const MOD_CTRL = 2;
export const MOD_META = 4;
export const MOD_SHIFT = 8;

export interface KeyDef {
  key: string;
  code: string;
  keyCode: number;
  text?: string;
  location?: number;
}

const NAMED: Record<string, KeyDef> = {
  Enter: { key: "Enter", code: "Enter", keyCode: 13, text: "\r" },
  Tab: { key: "Tab", code: "Tab", keyCode: 9 },
  Escape: { key: "Escape", code: "Escape", keyCode: 27 },
  Backspace: { key: "Backspace", code: "Backspace", keyCode: 8 },
  Delete: { key: "Delete", code: "Delete", keyCode: 46 },
  Insert: { key: "Insert", code: "Insert", keyCode: 45 },
  Space: { key: " ", code: "Space", keyCode: 32, text: " " },
  ArrowLeft: { key: "ArrowLeft", code: "ArrowLeft", keyCode: 37 },
  ArrowUp: { key: "ArrowUp", code: "ArrowUp", keyCode: 38 },
  ArrowRight: { key: "ArrowRight", code: "ArrowRight", keyCode: 39 },
  ArrowDown: { key: "ArrowDown", code: "ArrowDown", keyCode: 40 },
  Home: { key: "Home", code: "Home", keyCode: 36 },
  End: { key: "End", code: "End", keyCode: 35 },
  PageUp: { key: "PageUp", code: "PageUp", keyCode: 33 },
  PageDown: { key: "PageDown", code: "PageDown", keyCode: 34 },
  Shift: { key: "Shift", code: "ShiftLeft", keyCode: 16, location: 1 },
  Control: { key: "Control", code: "ControlLeft", keyCode: 17, location: 1 },
  Alt: { key: "Alt", code: "AltLeft", keyCode: 18, location: 1 },
  Meta: { key: "Meta", code: "MetaLeft", keyCode: 91, location: 1 },
};
for (let i = 1; i <= 12; i++) NAMED[`F${i}`] = { key: `F${i}`, code: `F${i}`, keyCode: 111 + i };

const ALIASES: Record<string, string> = {
  return: "Enter", esc: "Escape", del: "Delete", up: "ArrowUp", down: "ArrowDown", left: "ArrowLeft",
  right: "ArrowRight", pgup: "PageUp", pgdn: "PageDown", " ": "Space", spacebar: "Space",
};

const MODIFIER_NAMES: Record<string, "Alt" | "Control" | "Meta" | "Shift" | "Mod"> = {
  alt: "Alt", option: "Alt", control: "Control", ctrl: "Control", meta: "Meta", cmd: "Meta", command: "Meta",
  super: "Meta", shift: "Shift", mod: "Mod", cmdorctrl: "Mod",
};

const MOD_BITS = { Alt: MOD_ALT, Control: MOD_CTRL, Meta: MOD_META, Shift: MOD_SHIFT } as const;

const PUNCT: Record<string, [string, number]> = {
  "-": ["Minus", 189], "=": ["Equal", 187], "[": ["BracketLeft", 219], "]": ["BracketRight", 221],
  "\\": ["Backslash", 220], ";": ["Semicolon", 186], "'": ["Quote", 222], ",": ["Comma", 188],
  ".": ["Period", 190], "/": ["Slash", 191], "`": ["Backquote", 192],
};
const SHIFTED: Record<string, string> = {
  "!": "1", "@": "2", "#": "3", $: "4", "%": "5", "^": "6", "&": "7", "*": "8", "(": "9", ")": "0",
  _: "-", "+": "=", "{": "[", "}": "]", "|": "\\", ":": ";", '"': "'", "<": ",", ">": ".", "?": "/", "~": "`",
};

/** The key definition of one printable character (US layout where it has a physical key). */
export function charKey(ch: string): KeyDef {
  if (/^[a-z]$/.test(ch)) return { key: ch, code: `Key${ch.toUpperCase()}`, keyCode: ch.toUpperCase().charCodeAt(0), text: ch };
  if (/^[A-Z]$/.test(ch)) return { key: ch, code: `Key${ch}`, keyCode: ch.charCodeAt(0), text: ch };
  if (/^[0-9]$/.test(ch)) return { key: ch, code: `Digit${ch}`, keyCode: ch.charCodeAt(0), text: ch };
  if (ch === " ") return { ...(NAMED.Space as KeyDef) };
  if (ch === "\n" || ch === "\r") return { ...(NAMED.Enter as KeyDef) };
  if (ch === "\t") return { ...(NAMED.Tab as KeyDef) };
  const p = PUNCT[ch];
  if (p) return { key: ch, code: p[0], keyCode: p[1], text: ch };
  const base = SHIFTED[ch];
  if (base !== undefined) {
    const b = charKey(base);
    return { key: ch, code: b.code, keyCode: b.keyCode, text: ch };
  }
  // Anything else (accents, emoji, CJK): no physical key; text-only event.
  return { key: ch, code: "", keyCode: 0, text: ch };
}

export interface Combo {
  /** Modifier keys in press order. */
  modifiers: ("Alt" | "Control" | "Meta" | "Shift")[];
  /** Bitmask for CDP `modifiers`. */
  mask: number;
  key: KeyDef;
}

export class KeyError extends Error {
  override name = "KeyError";
}

/** Parses "Mod+Shift+Z" etc. `mac` decides what Mod means (Meta on macOS, Control elsewhere). */
export function parseCombo(spec: string, mac: boolean): Combo {
  if (typeof spec !== "string" || spec.length === 0) throw new KeyError("empty key");
  // "+" alone or a trailing "++" means the plus key.
  const parts: string[] = [];
  let rest = spec;
  while (rest.length > 0) {
    const i = rest.indexOf("+", 1);
    if (i < 0) {
      parts.push(rest);
      break;
    }
    parts.push(rest.slice(0, i));
    rest = rest.slice(i + 1);
    if (rest === "") throw new KeyError(`"${spec}" ends with "+"`);
  }
  const keyPart = parts.pop() as string;
  const modifiers: Combo["modifiers"] = [];
  for (const p of parts) {
    const m = MODIFIER_NAMES[p.toLowerCase()];
    if (!m) throw new KeyError(`"${p}" is not a modifier (use Control, Alt, Shift, Meta or Mod)`);
    const real = m === "Mod" ? (mac ? "Meta" : "Control") : m;
    if (!modifiers.includes(real)) modifiers.push(real);
  }
  let mask = 0;
  for (const m of modifiers) mask |= MOD_BITS[m];
  let key: KeyDef | undefined;
  const named = NAMED[keyPart] ?? NAMED[ALIASES[keyPart.toLowerCase()] ?? ""] ?? findNamedCaseless(keyPart);
  if (named) key = { ...named };
  // A letter names the key: "Mod+A" is Ctrl/Cmd with the a key (event.key "a"); Shift gives "A".
  else if (/^[a-zA-Z]$/.test(keyPart)) key = charKey(keyPart.toLowerCase());
  else if ([...keyPart].length === 1) key = charKey(keyPart);
  else throw new KeyError(`unknown key "${keyPart}"`);
  // Shift+letter produces the capital; a combo with Control/Meta/Alt produces no text.
  if (mask & MOD_SHIFT && /^[a-z]$/.test(key.key)) key = { ...key, key: key.key.toUpperCase(), text: key.key.toUpperCase() };
  if (mask & (MOD_CTRL | MOD_META | MOD_ALT)) delete key.text;
  if (key.key === "Enter" && mask !== 0 && mask !== MOD_SHIFT) delete key.text;
  return { modifiers, mask, key };
}

function findNamedCaseless(name: string): KeyDef | undefined {
  const l = name.toLowerCase();
  for (const [k, v] of Object.entries(NAMED)) if (k.toLowerCase() === l) return v;
  return undefined;
}

/** macOS editing shortcuts are browser menu commands; CDP needs them named explicitly. */
const MAC_COMMANDS: Record<string, string> = {
  a: "selectAll", c: "copy", x: "cut", v: "paste", z: "undo",
};

export interface KeyEventParams {
  type: "keyDown" | "rawKeyDown" | "keyUp" | "char";
  key: string;
  code: string;
  windowsVirtualKeyCode: number;
  nativeVirtualKeyCode: number;
  modifiers: number;
  text?: string;
  unmodifiedText?: string;
  location?: number;
  commands?: string[];
}

/** The ordered CDP key events for one combo: modifiers down, key down/up, modifiers up. */
export function comboEvents(c: Combo, mac: boolean): KeyEventParams[] {
  const ev: KeyEventParams[] = [];
  let mask = 0;
  const def = (k: KeyDef, type: KeyEventParams["type"], m: number): KeyEventParams => {
    const p: KeyEventParams = { type, key: k.key, code: k.code, windowsVirtualKeyCode: k.keyCode, nativeVirtualKeyCode: k.keyCode, modifiers: m };
    if (k.location !== undefined) p.location = k.location;
    return p;
  };
  for (const m of c.modifiers) {
    mask |= MOD_BITS[m];
    ev.push(def(NAMED[m] as KeyDef, "rawKeyDown", mask));
  }
  const down = def(c.key, c.key.text ? "keyDown" : "rawKeyDown", mask);
  if (c.key.text) {
    down.text = c.key.text;
    down.unmodifiedText = c.key.text;
  }
  if (mac && mask & MOD_META) {
    const lower = c.key.key.toLowerCase();
    const cmd = lower === "z" && mask & MOD_SHIFT ? "redo" : MAC_COMMANDS[lower];
    if (cmd) down.commands = [cmd];
  }
  ev.push(down);
  ev.push(def(c.key, "keyUp", mask));
  for (const m of [...c.modifiers].reverse()) {
    mask &= ~MOD_BITS[m];
    ev.push(def(NAMED[m] as KeyDef, "keyUp", mask));
  }
  return ev;
}

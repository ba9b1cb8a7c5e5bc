// Fidelity: compactness must never win by dropping what an agent needs. For every page, the
// elements an agent must be able to address (each button, link and field, by its accessible name);
// each server's snapshot is parsed in its own dialect and every element must appear with a handle
// the server accepts in its action tools: Torii `[b12]` (before: `[ref=eN]`), Playwright `[ref=…]`, DevTools `uid=…`,
// agent-browser `[…, ref=eN]` (used as `@eN`).

export type Dialect = "torii" | "toriibefore" | "playwright" | "devtools" | "agentbrowser";
export type Kind = "button" | "link" | "field";

/** One addressable node in a snapshot. */
export interface Addressable {
  role: string;
  name: string;
  ref: string;
}

export interface Expect {
  kind: Kind;
  name: string;
  count?: number;
}

const KIND_OF_ROLE: Record<string, Kind> = {
  button: "button",
  menuitem: "button",
  link: "link",
  textbox: "field",
  searchbox: "field",
  spinbutton: "field",
  combobox: "field",
  listbox: "field",
  checkbox: "field",
  radio: "field",
  slider: "field",
  switch: "field",
  textarea: "field",
  date: "field",
  datetime: "field",
  time: "field",
};

export function kindOf(role: string): Kind | undefined {
  return KIND_OF_ROLE[role.toLowerCase()];
}

const unq = (s: string) => s.replace(/\\(.)/g, "$1");
export const norm = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();

/** `role "name" [states…] [ref=X]`, the name optional (Playwright prints states before the ref); several may share a line. */
const CONTROL = /([A-Za-z]+)(?:\s+"((?:[^"\\]|\\.)*)")?(?:\s+\[(?!ref=)[^\]]*\])*\s+\[ref=([^\]\s]+)\]/g;

/** Torii and Playwright print YAML-style lines: `- role "name" [ref=e12] [states]`. */
function parseYaml(text: string, compactRows: boolean): Addressable[] {
  const out: Addressable[] = [];
  // Torii prints simple table rows on one line, cells joined by " | "; a control identical to
  // the one in the same column of the row above prints as a bare "[ref=eN]" (documented in the
  // extension's page/render.ts). The column's last full control gives it its role and name.
  let above: (Addressable | undefined)[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/^\s*-\s+/, "");
    const row = compactRows ? /^row(?:\s+"(?:[^"\\]|\\.)*")?:\s(.*)$/.exec(line) : null;
    if (row) {
      above = rowControls(row[1] as string, above, /^\[ref=([^\]\s]+)\]/, CONTROL, out);
      continue;
    }
    above = [];
    // Every control on the line: Torii prints leaves inline (`- listitem: link "X" [ref=e5]`);
    // Playwright single-quotes lines holding ": " (`- 'checkbox "Done: X" [ref=e9]'`).
    const body = line.startsWith("'") ? line.slice(1).replace(/''/g, "'") : line;
    if (!raw.trimStart().startsWith("-")) continue;
    for (const m of body.matchAll(CONTROL)) out.push({ role: m[1] as string, name: unq(m[2] ?? ""), ref: m[3] as string });
  }
  return out;
}

/**
 * The controls of one compact table row (`row: a | b | button "Edit" [ref]`), added to out; returns
 * the row's control per column, for the next row. A bare ref (`bare`) is the same control as the
 * one above in its column; a cell may hold several controls (`link "View" [r5] button "Refund" [r6]`).
 */
function rowControls(cells: string, above: (Addressable | undefined)[], bare: RegExp, control: RegExp, out: Addressable[]): (Addressable | undefined)[] {
  const cur: (Addressable | undefined)[] = [];
  cells.split(" | ").forEach((cell, i) => {
    const c = cell.trim();
    const b = bare.exec(c);
    if (b) {
      const prev = above[i];
      if (prev) {
        const a = { role: prev.role, name: prev.name, ref: b[1] as string };
        out.push(a);
        cur[i] = a;
      }
      return;
    }
    for (const m of c.matchAll(control)) {
      const a = { role: m[1] as string, name: unq(m[2] ?? ""), ref: m[3] as string };
      out.push(a);
      cur[i] ??= a;
    }
  });
  return cur;
}

/** Chrome DevTools MCP prints `uid=1_5 role "name" …`, one node a line. */
function parseDevtools(text: string): Addressable[] {
  const out: Addressable[] = [];
  for (const line of text.split("\n")) {
    const m = /uid=(\S+)\s+([A-Za-z]+)(?:\s+"((?:[^"\\]|\\.)*)")?/.exec(line);
    if (m) out.push({ role: m[2] as string, name: unq(m[3] ?? ""), ref: m[1] as string });
  }
  return out;
}

/** agent-browser prints `- role "name" [attr, …, ref=eN]: value`, the ref among the node's attributes. */
function parseAgentBrowser(text: string): Addressable[] {
  const out: Addressable[] = [];
  for (const line of text.split("\n")) {
    const m = /^\s*-\s+'?([A-Za-z]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s+\[([^\]]*)\]/.exec(line);
    const ref = m && /(?:^|,\s*)ref=([^,\s\]]+)/.exec(m[3] as string);
    if (m && ref) out.push({ role: m[1] as string, name: unq(m[2] ?? ""), ref: ref[1] as string });
  }
  return out;
}

/** Torii's ref: its document's tag (letters, never "h") and a number (extension/src/shared/refname.ts). */
const TORII_REF = "[a-gi-z]{1,8}[1-9][0-9]*";
const TORII_BARE = new RegExp(`^\\[(${TORII_REF})\\]`);
const TORII_CONTROL = new RegExp(`([A-Za-z]+)(?:\\s+"((?:[^"\\\\]|\\\\.)*)")?\\s+\\[(${TORII_REF})\\]`, "g");

/**
 * Torii prints `role "name" [b12] [states]: value`, nested by indentation alone (no list dash);
 * the ref is the bracket right after the name. Simple table rows print on one line as above, a
 * control identical to the one above in its column as a bare `[b12]`. The first line is the tab's
 * header and `text:` lines are page text: neither holds controls.
 */
function parseTorii(text: string): Addressable[] {
  const out: Addressable[] = [];
  let above: (Addressable | undefined)[] = [];
  const lines = text.split("\n");
  for (let li = 1; li < lines.length; li++) {
    const line = (lines[li] as string).trimStart();
    const row = /^row(?:\s+"(?:[^"\\]|\\.)*")?:\s(.*)$/.exec(line);
    if (row) {
      above = rowControls(row[1] as string, above, TORII_BARE, TORII_CONTROL, out);
      continue;
    }
    above = [];
    if (line.startsWith("text:")) continue;
    for (const m of line.matchAll(TORII_CONTROL)) out.push({ role: m[1] as string, name: unq(m[2] ?? ""), ref: m[3] as string });
  }
  return out;
}

export function parseSnapshot(d: Dialect, text: string): Addressable[] {
  if (d === "devtools") return parseDevtools(text);
  // A "before" build from after the ref format changed prints the new refs too.
  if (d === "torii" || (d === "toriibefore" && !/\[ref=/.test(text))) return parseTorii(text);
  if (d === "agentbrowser") return parseAgentBrowser(text);
  return parseYaml(text, d === "toriibefore");
}

/** The addressable nodes of a kind whose name is `name` (exact after normalising, else a prefix). */
export function findAll(items: Addressable[], kind: Kind, name: string): Addressable[] {
  const n = norm(name);
  const ofKind = items.filter((a) => kindOf(a.role) === kind);
  const exact = ofKind.filter((a) => norm(a.name) === n);
  return exact.length ? exact : ofKind.filter((a) => norm(a.name).startsWith(n));
}

export interface Coverage {
  found: number;
  total: number;
  missing: string[];
}

export function coverage(d: Dialect, text: string, expected: Expect[]): Coverage {
  const items = parseSnapshot(d, text);
  let found = 0;
  let total = 0;
  const missing: string[] = [];
  for (const e of expected) {
    const want = e.count ?? 1;
    const got = Math.min(want, findAll(items, e.kind, e.name).length);
    found += got;
    total += want;
    if (got < want) missing.push(`${e.kind} "${e.name}"${want > 1 ? ` ${got}/${want}` : ""}`);
  }
  return { found, total, missing };
}

// ---------- what an agent must be able to address, per page ----------

const b = (name: string, count?: number): Expect => ({ kind: "button", name, ...(count ? { count } : {}) });
const l = (name: string, count?: number): Expect => ({ kind: "link", name, ...(count ? { count } : {}) });
const f = (name: string): Expect => ({ kind: "field", name });

function table(rows: number): Expect[] {
  return [b("Edit", rows), l("Profile", rows)];
}

function article(): Expect[] {
  const sections = ["A timetable from another age", "Who rides at night", "The economics of sleep",
    "Borders, gauges and bureaucracy", "The new operators", "What comes next"];
  const out: Expect[] = [
    l("The Daily Ledger"),
    ...["World", "Business", "Technology", "Science", "Culture", "Opinion"].map((n) => l(n)),
    l("Travel", 2),
    l("Sign in"),
    l("Mara Lindqvist"),
    f("Search the Ledger"),
    b("Search"),
    b("Subscribe"),
    b("Share on social"),
    b("Copy link"),
    b("Save for later"),
    ...sections.map((s) => l(s)),
    ...sections.map((s) => l(`the ${s.toLowerCase()} report`)),
    f("Name"),
    f("Email"),
    f("Comment"),
    f("Notify me of replies"),
    b("Post comment"),
    ...["Europe's busiest border crossing", "Inside the last sleeper factory", "Why fares fell",
      "A night on the Nordland line", "Rail versus short-haul flights"].map((n) => l(n)),
    ...["Storm closes alpine passes", "Budget talks stall", "A museum reopens", "The price of coffee", "Election countdown"].map((n) => l(n)),
    ...["About us", "Contact", "Careers", "Privacy policy", "Terms of use", "Cookie settings"].map((n) => l(n)),
  ];
  for (let i = 1; i <= 18; i++) out.push(l(`Footnote ${i}`), l(`Read the source ${i}`));
  return out;
}

function checkout(): Expect[] {
  return [
    ...["Northwind Outfitters", "Cart", "Checkout", "Confirmation", "Help", "Returns policy", "Shipping policy"].map((n) => l(n)),
    ...["Email address", "Phone", "Email me with news and offers", "First name", "Last name", "Company (optional)",
      "Address", "Apartment, suite, etc.", "City", "Postal code", "Country", "Save this information for next time",
      "Standard (3–5 days) — free", "Express (1–2 days) — €9.90", "Pick up in store", "Delivery instructions",
      "Card number", "Expiry (MM/YY)", "Security code", "Name on card", "Billing address same as shipping",
      "This order is a gift", "Gift message", "I agree to the terms and conditions", "Quantity", "Quantity of socks",
      "Discount code"].map(f),
    ...["Place order", "Return to cart", "Remove jacket", "Remove socks", "Apply"].map((n) => b(n)),
  ];
}

function dashboard(): Expect[] {
  const out: Expect[] = [
    ...["Overview", "Orders", "Customers", "Products", "Inventory", "Reports", "Marketing", "Settings"].map((n) => l(n)),
    f("Search orders, customers, products"),
    b("Notifications (3)"),
    b("Dana Kim"),
    f("Status"),
    f("From"),
    f("To"),
    f("Flagged only"),
    ...["Apply filters", "Reset", "Export CSV"].map((n) => b(n)),
    ...["Order", "Customer", "Date", "Amount", "Status"].map((n) => b(n)),
    b("Previous page"),
    b("Next page"),
    ...["1", "2", "3", "4", "5"].map((n) => l(n)),
  ];
  for (let i = 0; i < 50; i++) out.push(l(`View order ${10400 + i}`), b(`Refund ${10400 + i}`));
  return out;
}

function app(): Expect[] {
  const tasks = ["Draft quarterly plan", "Review pull request 42", "Book venue", "Update roadmap", "Reply to Jonas", "Prepare demo"];
  return [
    // open shadow roots (nested)
    ...["New document", "Open", "Share", "Account menu"].map((n) => b(n)),
    f("Search workspace"),
    ...["Inbox", "My tasks", "Projects", "Calendar", "Files", "Reports"].map((n) => l(n)),
    f("New task"),
    b("Add task"),
    ...tasks.flatMap((t) => [f(`Done: ${t}`), b(`Edit task: ${t}`), b(`Delete task: ${t}`)]),
    f("Status message"),
    b("Save status"),
    l("View profile"),
    // same-origin iframe
    f("Display name"),
    f("Theme"),
    f("Weekly email digest"),
    b("Save settings"),
    // cross-origin iframe
    f("Your message"),
    b("Send message"),
    b("Attach file"),
  ];
}

/** Elements an agent must be able to address, by page id (see fixtures.ts). */
export function expectedFor(pageId: string): Expect[] {
  const rows = /^rows-(\d+)$/.exec(pageId);
  if (rows) return table(Number(rows[1]));
  switch (pageId) {
    case "article":
      return article();
    case "checkout":
      return checkout();
    case "dashboard":
      return dashboard();
    case "app":
      return app();
    default:
      throw new Error(`no fidelity list for page ${pageId}`);
  }
}

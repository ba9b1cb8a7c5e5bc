// Per-file rig of the adversarial suite: one daemon, one headless Chromium with the extension, one
// real MCP client and the three-origin attack site. Each test sets the person's policy (A only, act
// mode on, code and passwords off unless asked), opens its own tab on A through `navigate`, and
// judges the outcome from what reached the agent (every result it got) and what reached the
// attacker (the site's request log, after every page flushed its beacons).
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../browser.ts";
import { useRig } from "../harness.ts";
import { Mcp, type ToolResult } from "../mcp.ts";
import { setPolicy } from "../safety.ts";
import type { Torii } from "../torii.ts";
import { pollUntil, withTimeout } from "../util.ts";
import { type Attacker, BG, MARK, QS, type Role, SECRET_STRINGS, TITLE } from "./secrets.ts";
import { AttackSite, type Beacon } from "./site.ts";

type Choice = "allow" | "ask" | "deny";

interface PolicyOpts {
  actMode?: boolean;
  fetch?: boolean;
  passwords?: boolean;
  evalExpression?: boolean;
  evalProgram?: boolean;
  invoke?: boolean;
  approvals?: Record<string, Choice>;
  approvalTimeoutMs?: number;
}

interface Opened {
  tabId: number;
  page: Page;
  url: string;
  result: ToolResult;
}

/** What an attacking page reports when input reached it (focus is left out: a page may focus itself). */
export const INPUT_KINDS = ["keydown", "keyup", "keypress", "mousedown", "mouseup", "click", "dblclick", "auxclick", "contextmenu", "input", "value", "submit", "paste"] as const;

export interface AttackRig {
  torii: Torii;
  browser: Browser;
  mcp: Mcp;
  site: AttackSite;
  /** An extension page: the person's UI (policy, tab queries). */
  ext: Page;
  policy(o?: PolicyOpts): Promise<void>;
  /** Opens A's `path` in a new agent tab through navigate (must succeed). */
  open(path: string, query?: Record<string, string | number>): Promise<Opened>;
  /** One tool call; every result is kept for the leak check. */
  call(name: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<ToolResult>;
  /** Every page and frame sends its pending beacons (bounded). */
  flush(): Promise<void>;
  /** Secrets found in the results of this test (`agentNamed`: leave out hosts the agent itself typed). */
  leaks(o?: { agentNamed?: boolean; extra?: string[] }): string[];
  /** What reached an attacker's pages, after a flush. */
  reached(role: Attacker | Role, kinds?: readonly string[]): Promise<Beacon[]>;
  /** Asserts no secret reached the agent and no input reached B or C. */
  expectClean(o?: { agentNamed?: boolean; extra?: string[]; kinds?: readonly string[]; ignore?: (b: Beacon) => boolean }): Promise<void>;
  /** The extension's tab id of a Playwright page (found by its URL). */
  tabIdOf(page: Page): Promise<number>;
  /** Pixels of B's and C's colours in a screenshot, decoded by the browser itself. */
  attackerPixels(image: { data: string; mimeType: string }): Promise<{ b: number; c: number; total: number }>;
  /** Throws LEAK when an image of the result shows B's or C's colour. */
  expectNoAttackerPixels(res: ToolResult): Promise<void>;
  /** Every tab id the browser has (read from an extension page). */
  tabIds(): Promise<number[]>;
  /** Waits for a tab that is not in `before`; returns its id. */
  newTab(before: number[]): Promise<number>;
  /** Waits until Chrome shows a JavaScript dialog on the page. */
  dialogShown(page: Page): Promise<void>;
  /** Waits until a frame of `role` in the page runs its beacon (the attack is armed). */
  frameReady(page: Page, role: Role): Promise<Frame>;
}

let seq = 0;
const dialogs = new WeakMap<Page, string>();

/** "b: keydown×3 (z,q,x) input×1" — what each attacker saw, compactly. */
function summarise(got: Beacon[]): string {
  const by = new Map<string, string[]>();
  for (const b of got) {
    const k = `${b.role}:${b.kind}`;
    by.set(k, [...(by.get(k) ?? []), b.data]);
  }
  return [...by].map(([k, v]) => `${k}×${v.length} (${[...new Set(v)].slice(0, 4).join(",").slice(0, 40)})`).join(" ");
}

/** `config`: added to the daemon's config.json before it starts (e.g. `broker.toolGroups`). */
export function useAttackRig(label: string, opts: { config?: Record<string, unknown> } = {}): () => AttackRig {
  const rig = useRig();
  let r: AttackRig | undefined;
  const results: ToolResult[] = [];
  const names: string[] = [];
  beforeAll(async () => {
    const torii = await rig.daemon();
    if (opts.config) await torii.configure(opts.config);
    await torii.start();
    const browser = await rig.browser();
    // Playwright dismisses a dialog itself unless the page has a listener: leave them all open,
    // and remember the latest one per page.
    const watch = (p: Page) => p.on("dialog", (d) => dialogs.set(p, d.message()));
    browser.context.on("page", watch);
    for (const p of browser.context.pages()) watch(p);
    const { popup: ext } = await pairBrowser(browser, torii);
    const site = await AttackSite.start();
    const mcp = await Mcp.connect(torii, label);
    await mcp.waitForCatalogue();

    const hostSecrets = [site.host("b"), site.host("c"), "127.0.0.2", `localhost:${site.port("b")}`, `localhost:${site.port("c")}`];
    const call = async (name: string, args: Record<string, unknown> = {}, timeoutMs = 30_000) => {
      const res = await mcp.call(name, args, timeoutMs);
      results.push(res);
      names.push(name);
      // ADV_DEBUG=1 prints every call and its answer, to see what an attack got.
      if (process.env.ADV_DEBUG) console.log(`[${name}] ${Math.round(res.ms)}ms ${JSON.stringify(args)} -> ${res.text.slice(0, 3000)}`);
      return res;
    };
    const pages = () => browser.context.pages().filter((p) => p !== ext && !p.url().startsWith("chrome-extension://"));
    const flush = async () => {
      const frames = pages().flatMap((p) => (p.isClosed() ? [] : p.frames()));
      await Promise.all(
        frames.map((f) => withTimeout(f.evaluate(() => (window as unknown as { __bk?: { flush(): Promise<unknown> } }).__bk?.flush()), 1_500)),
      );
    };
    const labels = new Map<string, string>([
      [MARK.b, "B's text"], [MARK.c, "C's text"], [TITLE.b, "B's title"], [TITLE.c, "C's title"], [QS.b, "B's URL query"], [QS.c, "C's URL query"],
      [site.host("b"), "B's host"], [site.host("c"), "C's host"], ["127.0.0.2", "C's address"],
    ]);
    const leaks = (o: { agentNamed?: boolean; extra?: string[] } = {}) => {
      const secrets = [...SECRET_STRINGS, ...(o.agentNamed ? [] : hostSecrets), ...(o.extra ?? [])];
      const found: string[] = [];
      results.forEach((res, i) => {
        const fields: [string, string][] = [
          ["text", res.text],
          ["structuredContent", JSON.stringify(res.data)],
          ["error", JSON.stringify(res.error ?? {})],
        ];
        const hits = new Map<string, string[]>();
        for (const [f, v] of fields) for (const sec of secrets) if (v.includes(sec)) hits.set(sec, [...(hits.get(sec) ?? []), f]);
        if (hits.size) found.push(`${names[i]} (call ${i + 1}) carries ${[...hits].map(([sec, fs]) => `${labels.get(sec) ?? `"${sec}"`} in ${fs.join("+")}`).join(", ")}`);
      });
      return found;
    };
    const reached = async (role: Role, kinds: readonly string[] = INPUT_KINDS) => {
      await flush();
      return site.beacons(role, kinds);
    };
    const tabIds = () =>
      ext.evaluate(async () => {
        const c = (globalThis as unknown as { chrome: { tabs: { query(q: object): Promise<{ id?: number }[]> } } }).chrome;
        return (await c.tabs.query({})).map((t) => t.id ?? -1);
      });
    r = {
      torii,
      browser,
      mcp,
      site,
      ext,
      policy: (o = {}) =>
        setPolicy(ext, {
          rules: [{ pattern: site.aPattern, fetch: o.fetch ?? false, allowPassword: o.passwords ?? false, evalExpression: o.evalExpression ?? false, evalProgram: o.evalProgram ?? false, invoke: o.invoke ?? false }],
          actMode: o.actMode ?? true,
          approvals: o.approvals ?? {},
          approvalTimeoutMs: o.approvalTimeoutMs ?? 60_000,
        }),
      async open(path, query = {}) {
        const tag = `tab${++seq}x`;
        site.tags.add(tag);
        const url = site.url("a", path, { ...query, t: tag });
        const before = new Set(browser.context.pages());
        const res = await call("navigate", { url, newTab: true }, 20_000);
        if (res.isError) throw new Error(`navigate ${url} failed: ${res.text}`);
        const tabId = res.data.tabId as number;
        const page = await pollUntil(
          `the Playwright page of ${url}`,
          () => browser.context.pages().find((p) => !before.has(p)) ?? browser.context.pages().find((p) => p.url().includes(`t=tab${seq}x`)),
          { timeoutMs: 5_000, intervalMs: 20 },
        );
        return { tabId, page, url, result: res };
      },
      call,
      flush,
      leaks,
      reached,
      async expectClean(o = {}) {
        const problems = leaks(o);
        const got = [...(await reached("b", o.kinds)), ...site.beacons("c", o.kinds ?? INPUT_KINDS)].filter((b) => !o.ignore?.(b));
        if (got.length) problems.push(`input reached the attacker: ${summarise(got)}`);
        if (problems.length) throw new Error(`LEAK: ${problems.join("; ")}`);
      },
      async tabIdOf(page) {
        const url = page.url();
        return pollUntil(`the tab id of ${url}`, async () => {
          const ids = await ext.evaluate(async (u) => {
            const c = (globalThis as unknown as { chrome: { tabs: { query(q: object): Promise<{ id?: number; url?: string; pendingUrl?: string }[]> } } }).chrome;
            return (await c.tabs.query({})).filter((t) => t.url === u || t.pendingUrl === u).map((t) => t.id);
          }, url);
          return ids.length === 1 ? ids[0] : undefined;
        }, { timeoutMs: 5_000, intervalMs: 50 });
      },
      async attackerPixels(image) {
        return ext.evaluate(
          async ({ data, mime, bgB, bgC }) => {
            const img = new Image();
            img.src = `data:${mime};base64,${data}`;
            await img.decode();
            const cv = document.createElement("canvas");
            cv.width = img.naturalWidth;
            cv.height = img.naturalHeight;
            const g = cv.getContext("2d");
            if (!g) throw new Error("no 2d context");
            g.drawImage(img, 0, 0);
            const px = g.getImageData(0, 0, cv.width, cv.height).data;
            const near = (i: number, c: number[]) => Math.abs((px[i] ?? 0) - (c[0] ?? 0)) + Math.abs((px[i + 1] ?? 0) - (c[1] ?? 0)) + Math.abs((px[i + 2] ?? 0) - (c[2] ?? 0)) < 60;
            let b = 0;
            let c = 0;
            for (let i = 0; i < px.length; i += 4) {
              if (near(i, bgB)) b++;
              else if (near(i, bgC)) c++;
            }
            return { b, c, total: px.length / 4 };
          },
          { data: image.data, mime: image.mimeType, bgB: BG.b, bgC: BG.c },
        );
      },
      async expectNoAttackerPixels(res) {
        for (const img of res.images) {
          const px = await r!.attackerPixels(img);
          if (px.b + px.c > 0) throw new Error(`LEAK: the screenshot shows ${px.b} pixels of B and ${px.c} of C`);
        }
      },
      tabIds: () => tabIds(),
      async dialogShown(page) {
        await pollUntil("a dialog on the page", () => dialogs.has(page), { timeoutMs: 8_000, intervalMs: 20 });
      },
      async newTab(before) {
        return pollUntil("a new tab", async () => (await tabIds()).find((id) => !before.includes(id)), { timeoutMs: 8_000, intervalMs: 50 });
      },
      frameReady(page, role) {
        return pollUntil(`a frame of ${role} ready in ${page.url()}`, async () => {
          for (const f of page.frames().filter((fr) => fr !== page.mainFrame() && fr.url().startsWith(site.origin[role]))) {
            if (await withTimeout(f.evaluate(() => !!(window as unknown as { __bk?: unknown }).__bk && document.readyState === "complete"), 500)) return f;
          }
          return undefined;
        }, { timeoutMs: 8_000, intervalMs: 30 });
      },
    };
  });
  beforeEach(async ({ onTestFailed }) => {
    onTestFailed(() => {
      if (r) console.error(`==== torii mcp stderr ====\n${r.mcp.log}`);
    });
    results.length = 0;
    names.length = 0;
    r?.site.clear();
    await r?.policy();
  });
  afterEach(async () => {
    // Cleanup, not the test: a tab held by a dialog or a navigation must not stall the next test.
    if (r) await closeWebPages(r.browser);
  });
  afterAll(async () => {
    await r?.mcp.close();
    await r?.site.close();
  });
  return () => {
    if (!r) throw new Error("attack rig not started (beforeAll failed?)");
    return r;
  };
}

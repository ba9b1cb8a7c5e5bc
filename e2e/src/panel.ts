// The side panel as a person drives it: the real extension's sidepanel.html opened as a tab for one
// window. Shared by the side-panel test files.
import type { BrowserContext, Locator, Page } from "playwright-core";
import { expect } from "vitest";
import { EXTENSION_ORIGIN } from "./env.ts";

/** The id of the window an extension page is in. */
export function windowOf(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const c = (globalThis as unknown as { chrome: { windows: { getCurrent(): Promise<{ id: number }> } } }).chrome;
    return (await c.windows.getCurrent()).id;
  });
}

/** Opens the window's side panel as a tab and waits until it has loaded its state. */
export async function openPanel(context: BrowserContext, windowId: number): Promise<Page> {
  const p = await context.newPage();
  await p.goto(`${EXTENSION_ORIGIN}/sidepanel.html?window=${windowId}`);
  await p.waitForFunction(() => document.body.dataset.ready === "true");
  return p;
}

/** What a person looks at and does in a panel; `page` is read at each use (tests reload and reopen it). */
export function panelDriver(page: () => Page, timeout = 20_000) {
  const transcript = (): Locator => page().getByTestId("transcript");
  const agentMsgs = (agent?: string): Locator =>
    transcript().locator(agent ? `[data-testid="msg-agent"][data-agent="${agent}"]` : '[data-testid="msg-agent"]');
  return {
    transcript,
    agentMsgs,
    chip: (agent: string): Locator => page().locator(`[data-testid="agent-chip"][data-agent="${agent}"]`),
    async send(text: string): Promise<void> {
      const input = page().getByTestId("composer-input");
      await input.fill(text);
      await input.press("Enter");
    },
    /** Waits for the n-th (1-based) finished reply of an agent; returns it. */
    async reply(agent: string, n: number, wait = timeout): Promise<Locator> {
      const msgs = agentMsgs(agent);
      await expect.poll(() => msgs.count(), { timeout: wait }).toBeGreaterThanOrEqual(n);
      const m = msgs.nth(n - 1);
      await expect.poll(() => m.getAttribute("data-streaming"), { timeout: wait }).toBe("false");
      return m;
    },
    /** Waits until no agent of the room is in a turn. */
    async idle(): Promise<void> {
      await expect.poll(() => page().evaluate(() => document.body.dataset.busy), { timeout }).toBe("false");
    },
    async clearScreen(): Promise<void> {
      await page().getByTestId("clear").click();
      await expect.poll(() => transcript().locator("li").count()).toBe(0);
    },
  };
}

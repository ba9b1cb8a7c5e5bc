// find and reveal in a real Chromium on lists.html: unnamed list items, and a 10,000-row virtual
// list of plain <div>s whose nodes are recycled on every scroll.
//   cd extension && npx vitest run --config test-page/vitest.config.ts find.test.ts
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Page } from "playwright-core";
import { call, ok, open, setup, type Env } from "./harness";

let env: Env;
beforeAll(async () => {
  env = await setup();
}, 60_000);
afterAll(async () => {
  await env?.close();
});

type Match = { line: string; ref: string; exact: boolean };

/** What the agent would do with a ref: read its text. */
async function textOfRef(page: Page, ref: string): Promise<string> {
  return (await ok(page, "readText", { root: ref })).text;
}

/** The rendered rows' labels, as the page shows them now. */
async function renderedRows(page: Page): Promise<string[]> {
  return page.evaluate(() => Array.from(document.querySelectorAll("#rows .row:not([hidden])"), (d) => d.textContent ?? ""));
}

describe("find: one line and one ref per matching element", () => {
  test("three unnamed <li>s are three matches, each with its text and a ref that reads and clicks that item", async () => {
    const page = await open(env, "lists.html");
    const f = await ok(page, "find", { role: "listitem" });
    expect(f.total).toBe(3);
    const m = f.matches as Match[];
    expect(m.map((x) => x.line)).toEqual([
      expect.stringMatching(/^listitem \[[a-gi-z]+\d+\]: Apples from the orchard$/),
      expect.stringMatching(/^listitem \[[a-gi-z]+\d+\]: Bananas, ripe$/),
      expect.stringMatching(/^listitem \[[a-gi-z]+\d+\]: Cherries in a bowl$/),
    ]);
    expect(new Set(m.map((x) => x.ref)).size).toBe(3);
    // Each ref is in its own line and names that item, not a neighbour.
    for (const [i, want] of ["Apples from the orchard", "Bananas, ripe", "Cherries in a bowl"].entries()) {
      const x = m[i] as Match;
      expect(x.line).toContain(`[${x.ref}]`);
      expect(await textOfRef(page, x.ref)).toBe(want);
      await ok(page, "domClick", { ref: x.ref });
      expect(await page.textContent("#picked")).toBe(`picked ${want}`);
    }
    // By text: the item itself, once, with the same ref.
    const b = await ok(page, "find", { text: "bananas" });
    expect(b.total).toBe(1);
    expect((b.matches as Match[])[0]).toMatchObject({ ref: (m[1] as Match).ref, exact: false, line: expect.stringMatching(/^listitem \[[a-gi-z]+\d+\]: Bananas, ripe$/) });
    await page.close();
  });

  test("text in a list of plain <div>s (one outline run): each match is the row holding it, counted once", async () => {
    const page = await open(env, "lists.html");
    const rows = await renderedRows(page);
    const f = await ok(page, "find", { text: "Row 1" });
    const want = rows.filter((r) => r.toLowerCase().includes("row 1"));
    expect(want.length).toBeGreaterThan(3);
    expect(f.total).toBe(want.length);
    const m = f.matches as Match[];
    // The exact one first, then the others in order; every one its own ref and its own text.
    expect(m[0]).toMatchObject({ exact: true, line: expect.stringMatching(/^text \[[a-gi-z]+\d+\]: Row 1$/) });
    expect(new Set(m.map((x) => x.ref)).size).toBe(m.length);
    const read: string[] = [];
    for (const x of m) read.push(await textOfRef(page, x.ref));
    expect(read).toEqual(["Row 1", ...want.filter((r) => r !== "Row 1")]);
    for (const x of m) expect(x.line).toBe(`text [${x.ref}]: ${read[m.indexOf(x)]}`);
    const exact = await ok(page, "find", { text: "row 12" });
    expect(exact.total).toBe(1);
    expect(await textOfRef(page, (exact.matches as Match[])[0]!.ref)).toBe("Row 12");
    await page.close();
  });
});

describe("reveal in a 10,000-row virtual list with recycled nodes", () => {
  test("row 7,777: found in a few jumps from the rows' pitch; its ref reads 'Row 7777' and clicks it", async () => {
    for (const path of ["lists.html", "lists.html?vary=1", "lists.html?lag=120"]) {
      const page = await open(env, path);
      const r = await ok(page, "reveal", { text: "Row 7777" });
      expect(r, path).toMatchObject({ found: true, stop: "found", capped: false });
      console.log(`reveal "Row 7777" in ${path}: ${r.jumps} jumps, ${r.scrolls} scrolls, ${r.ms} ms in the page`);
      // Jumps, not 400 viewport steps; rows of three heights take a refinement or two more.
      expect(r.jumps, path).toBeGreaterThanOrEqual(1);
      expect(r.scrolls, path).toBeLessThanOrEqual(10);
      const m = r.matches[0] as Match;
      expect(m).toMatchObject({ exact: true, line: `text [${m.ref}]: Row 7777` });
      expect(await textOfRef(page, m.ref)).toBe("Row 7777");
      // Rendered and in view of the list.
      expect(await page.evaluate(() => {
        const d = Array.from(document.querySelectorAll("#rows .row")).find((x) => x.textContent === "Row 7777");
        const v = document.getElementById("rows")!.getBoundingClientRect();
        const b = d?.getBoundingClientRect();
        return !!b && b.top >= v.top && b.bottom <= v.bottom;
      })).toBe(true);
      await ok(page, "domClick", { ref: m.ref });
      expect(await page.textContent("#picked")).toBe("picked Row 7777");
      await page.close();
    }
  });

  test("a selector target with no number to jump by: scans down to the end, then from the top back to where it began", async () => {
    // The second list renders only once scrolling pauses for 80 ms: each step waits for it.
    for (const path of ["lists.html?n=400", "lists.html?n=400&lag=80"]) {
      const page = await open(env, path);
      await page.evaluate(() => {
        document.getElementById("rows")!.scrollTop = 6000;
      });
      await page.waitForFunction(() => document.querySelector("#rows .row")?.textContent !== "Row 1");
      const r = await ok(page, "reveal", { selector: '[data-row="3"]', container: "#rows" });
      expect(r, path).toMatchObject({ found: true, jumps: 0 });
      // It went to the end first (nothing below), then wrapped to the top.
      expect(r.searched[r.searched.length - 1].to, path).toBe(r.scrollHeight);
      expect(r.searched[0].from, path).toBe(0);
      expect(await textOfRef(page, (r.matches[0] as Match).ref), path).toBe("Row 3");
      await page.close();
    }
  });

  test("at its bounds it says how far it got: maxScrolls and time stop short of the end, capped; a whole search is not", async () => {
    const page = await open(env, "lists.html");
    const steps = await ok(page, "reveal", { text: "Nowhere row", maxScrolls: 5 });
    expect(steps).toMatchObject({ found: false, stop: "maxScrolls", capped: true, scrolls: 5 });
    expect(steps.searched).toHaveLength(1);
    expect(steps.searched[0].from).toBe(0);
    expect(steps.searched[0].to).toBe(steps.scrollY + steps.clientHeight);
    expect(steps.scrollY + steps.clientHeight).toBeLessThan(steps.scrollHeight);
    const time = await ok(page, "reveal", { text: "Nowhere row", budgetMs: 300 });
    expect(time).toMatchObject({ found: false, stop: "time", capped: true });
    expect(time.scrollY + time.clientHeight).toBeLessThan(time.scrollHeight);
    // A second call goes on from where the first stopped.
    expect(time.searched[0].from).toBe(steps.scrollY);
    const small = await open(env, "lists.html?n=200");
    const end = await ok(small, "reveal", { text: "Nowhere row" });
    expect(end).toMatchObject({ found: false, stop: "end", capped: false });
    expect(end.searched).toEqual([{ from: 0, to: end.scrollHeight }]);
    // A number outside the list: the jumps find nothing there, the scan covers the rest.
    const far = await ok(small, "reveal", { text: "Row 7777" });
    expect(far).toMatchObject({ found: false, stop: "end" });
    // An endless feed never has an end to reach: the time bound stops the search, and says so.
    const feed = await open(env, "lists.html?n=200&grow=1");
    const t1 = Date.now();
    const endless = await ok(feed, "reveal", { text: "Nowhere row", budgetMs: 1500 });
    expect(Date.now() - t1).toBeLessThan(6_000);
    expect(endless).toMatchObject({ found: false, stop: "time", capped: true });
    expect(endless.scrollHeight).toBeGreaterThan(200 * 30);
    await feed.close();
    const bad = await call(page, "reveal", { selector: "[data-row=", container: "#rows" });
    expect(bad.ok ? "" : `${bad.error.code}: ${bad.error.message}`).toMatch(/^invalid_argument: selector/);
    const both = await call(page, "reveal", { selector: ".row", text: "Row 1" });
    expect(both.ok ? "" : both.error.code).toBe("invalid_argument");
    await page.close();
    await small.close();
  });
});

// Approvals in a headless managed browser (SECURITY I-80): no one can see an approval window there,
// so what the launch policy leaves at "ask" fails at once with approval_unanswerable, naming the
// setting that decides it, and nothing runs; "allow" and "deny" in the launch policy answer for the
// person. Real daemon, real `torii launch --headless --policy FILE`, real extension, and the agent
// is the official MCP SDK client, whose default request timeout is 60 s: Torii's own typed error
// must come well before it, and the call queued behind the refused one must run.
import { readFile, writeFile } from "node:fs/promises";
import { type Server, createServer } from "node:http";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { browserPath } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { killByArg } from "../src/procs.ts";
import { pollUntil, removeDir, shortTempDir } from "../src/util.ts";

const FORM = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Order</title></head><body>
<form method="post" action="/submit"><input name="item" value="book"><button id="go" type="submit">Place order</button></form>
<p>Clicks: <span id="count">0</span></p>
<button id="bump" type="button" onclick="document.getElementById('count').textContent = String(Number(document.getElementById('count').textContent) + 1)">Bump</button>
</body></html>`;

/** One loopback origin serving the form; it counts the submissions it receives. */
class FormSite {
  posts = 0;
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}
  static async start(): Promise<FormSite> {
    let site: FormSite | undefined;
    const server = createServer((req, res) => {
      res.setHeader("Cache-Control", "no-store");
      if (req.method === "POST") {
        if (site) site.posts++;
        req.resume();
        res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end("<!doctype html><title>Done</title><p id=done>Order placed</p>");
        return;
      }
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(FORM);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const a = server.address();
    if (a === null || typeof a === "string") throw new Error("no port");
    site = new FormSite(server, a.port);
    return site;
  }
  get origin(): string {
    return `127.0.0.1:${this.port}`;
  }
  url(): string {
    return `http://127.0.0.1:${this.port}/form.html`;
  }
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

describeBrowser("headless launch: approvals no one can answer", () => {
  const rig = useRig();
  let root: string | undefined;
  let profile: string | undefined;
  const sites: FormSite[] = [];
  let mcp: Mcp | undefined;
  afterAll(async () => {
    await mcp?.close();
    if (profile) await killByArg(profile);
    if (root) await removeDir(root);
    for (const s of sites) await s.close();
  });

  test("bad approval values in a launch policy are refused before anything starts, with a suggestion", async () => {
    const torii = await rig.daemon();
    const dir = await shortTempDir();
    try {
      const file = join(dir, "p.json");
      await writeFile(file, JSON.stringify({ version: 1, rules: [{ pattern: "example.com", act: true }], approvals: { sumbit: "allow" } }));
      const kind = await torii.cli(["launch", "--headless", "--profile", join(dir, "profile"), "--policy", file]);
      expect(kind.code).not.toBe(0);
      expect(kind.stderr).toContain(`approvals.sumbit: unknown approval kind "sumbit" (did you mean "submit"?)`);

      await writeFile(file, JSON.stringify({ version: 1, rules: [{ pattern: "example.com", approvals: { submit: "yes" } }] }));
      const choice = await torii.cli(["launch", "--headless", "--profile", join(dir, "profile"), "--policy", file]);
      expect(choice.code).not.toBe(0);
      expect(choice.stderr).toContain(`rules[0].approvals.submit: submit: the choice must be allow, ask or deny, not "yes"`);

      const flag = await torii.cli(["launch", "--headless", "--profile", join(dir, "profile"), "--allow", "example.com", "--approve", "submit=alow"]);
      expect(flag.code).not.toBe(0);
      expect(flag.stderr).toContain(`not "alow" (did you mean "allow"?)`);

      // A wait longer than an MCP client's 60 s timeout is refused too.
      await writeFile(file, JSON.stringify({ version: 1, approvalTimeoutMs: 60000 }));
      const wait = await torii.cli(["launch", "--headless", "--profile", join(dir, "profile"), "--policy", file]);
      expect(wait.code).not.toBe(0);
      expect(wait.stderr).toContain("approvalTimeoutMs: must be a whole number of milliseconds from 1000 to 45000");
    } finally {
      await removeDir(dir);
    }
  });

  test("ask fails at once and submits nothing, the queued call runs; allow submits; deny refuses", { timeout: 180_000 }, async () => {
    const torii = await rig.daemon();
    await torii.start();
    const [ask, allow, deny] = [await FormSite.start(), await FormSite.start(), await FormSite.start()];
    sites.push(ask, allow, deny);
    root = await shortTempDir();
    profile = join(root, "profile");
    const policyFile = join(root, "policy.json");
    // Submit: asked on one origin, allowed on one, denied on one; code on the asking origin, where
    // evaluate is left at ask too.
    await writeFile(
      policyFile,
      JSON.stringify({
        version: 1,
        rules: [
          { pattern: ask.origin, act: true, evalExpression: true },
          { pattern: allow.origin, act: true, approvals: { submit: "allow" } },
          { pattern: deny.origin, act: true, approvals: { submit: "deny" } },
        ],
        approvals: { destructive_click: "deny", new_origin: "deny", upload: "deny", download: "deny" },
      }),
    );

    const r = await torii.cli(["launch", "--browser", browserPath ?? "", "--headless", "--profile", profile, "--policy", policyFile], { timeoutMs: 90_000 });
    if (r.code !== 0) {
      const log = await readFile(join(torii.stateDir, "browser.log"), "utf8").catch(() => "");
      expect.fail(`torii launch exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}\nbrowser.log:\n${log.split("\n").filter((l) => l.trim() && !/dbus/i.test(l)).slice(-30).join("\n")}`);
    }
    // launch says which kinds are left at ask, and that those calls fail at once.
    const said = `left at ask, so failing at once with approval_unanswerable: submit (on ${ask.origin}), evaluate (set them with`;
    expect(r.stderr).toContain(said);
    expect(r.stderr).not.toMatch(/destructive_click|new_origin|upload|download/);
    // status says it too.
    const st = await torii.cli(["status"]);
    expect(st.stdout).toContain(said);

    mcp = await Mcp.connect(torii, "launch-approvals");
    await mcp.waitForCatalogue();
    const nav = await pollUntil("the launch policy to be in force", async () => {
      const n = await mcp!.call("navigate", { url: ask.url() });
      return n.isError ? undefined : n;
    }, { timeoutMs: 20_000, intervalMs: 250 });
    const tabId = nav.data.tabId as number;

    // The submit and a call queued behind it on the same tab, sent together. The SDK's own
    // timeout is its default, 60 s (e2e/src/mcp.ts passes the same): Torii must answer first.
    const [submit, queued] = await Promise.all([mcp.call("click", { tabId, selector: "#go" }), mcp.call("click", { tabId, selector: "#bump" })]);
    expect(submit.error?.code, submit.text).toBe("approval_unanswerable");
    expect(submit.ms).toBeLessThan(10_000);
    expect(submit.error?.hint).toContain("--approve submit=allow");
    expect(submit.error?.message).toContain("headless");
    expect(queued.isError, queued.text).toBe(false);
    expect(queued.ms).toBeLessThan(20_000);
    expect((await mcp.ok("read_text", { tabId })).text).toContain("Clicks: 1");
    expect(ask.posts).toBe(0);

    // evaluate, left at ask: the same, at once.
    const ev = await mcp.call("evaluate", { tabId, expression: "1+1" });
    expect(ev.error?.code, ev.text).toBe("approval_unanswerable");
    expect(ev.ms).toBeLessThan(10_000);
    expect(ev.error?.hint).toContain("--approve evaluate=allow");

    // allow, the person's choice at launch: the form is submitted.
    const tabA = (await mcp.ok("navigate", { url: allow.url(), newTab: true })).data.tabId as number;
    const sent = await mcp.call("click", { tabId: tabA, selector: "#go" });
    expect(sent.isError, sent.text).toBe(false);
    await pollUntil("the allowed submission to reach the server", () => (allow.posts === 1 ? true : undefined), { timeoutMs: 10_000, intervalMs: 50 });

    // deny: refused, nothing sent.
    const tabD = (await mcp.ok("navigate", { url: deny.url(), newTab: true })).data.tabId as number;
    const refused = await mcp.call("click", { tabId: tabD, selector: "#go" });
    expect(refused.error?.code, refused.text).toBe("approval_denied");
    expect(deny.posts).toBe(0);
    expect(ask.posts).toBe(0);
  });
});

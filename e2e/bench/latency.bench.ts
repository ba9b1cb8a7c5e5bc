// The call-path latency bench (not part of `make test`): median and p95 of the cheapest tool (`tabs`)
// and of a small page's `snapshot`, through the real path — MCP client → `torii mcp` → daemon →
// extension → headless Chromium. LATENCY_REPS sets the calls per tool (default 50).
import { test } from "vitest";
import { describeBrowser } from "../src/harness.ts";
import { useToolsRig } from "../src/tools-rig.ts";

const REPS = Math.max(1, Number(process.env.LATENCY_REPS ?? 50));

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
}

describeBrowser("bench: call-path latency", () => {
  const rig = useToolsRig();

  test("tabs and a small page's snapshot", { timeout: 10 * 60_000 }, async () => {
    const { mcp } = rig();
    const { tabId } = await rig().open("landing.html");
    const run = async (tool: string, args: Record<string, unknown>) => {
      for (let i = 0; i < 5; i++) await mcp.ok(tool, args); // warm-up
      const ms: number[] = [];
      for (let i = 0; i < REPS; i++) {
        const t0 = performance.now();
        await mcp.ok(tool, args);
        ms.push(performance.now() - t0);
      }
      return `${tool}: p50 ${quantile(ms, 0.5).toFixed(2)} ms, p95 ${quantile(ms, 0.95).toFixed(2)} ms (${REPS} calls)`;
    };
    const lines = [await run("tabs", {}), await run("snapshot", { tabId })];
    console.log(lines.join("\n"));
  });
});

// The scripted ACP agent (internal/agents/scripted) the side-panel tests chat with.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./env.ts";

/** TORII_TEST_AGENT, else built from cmd/torii-test-agent into dir. */
export async function testAgent(dir: string): Promise<string> {
  if (process.env.TORII_TEST_AGENT) return process.env.TORII_TEST_AGENT;
  const out = join(dir, "torii-test-agent");
  await promisify(execFile)("go", ["build", "-o", out, "./cmd/torii-test-agent"], { cwd: repoRoot, timeout: 120_000 });
  return out;
}

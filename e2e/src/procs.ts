// Finds and ends processes by a marker in their command line (a temp profile
// dir only this test made), never by name.
import { readFile, readdir } from "node:fs/promises";
import { pollUntil } from "./util.ts";

export async function pidsWithArg(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const ent of await readdir("/proc")) {
    if (!/^\d+$/.test(ent)) continue;
    const pid = Number(ent);
    if (pid === process.pid) continue;
    try {
      const cmd = (await readFile(`/proc/${ent}/cmdline`, "utf8")).split("\0");
      if (cmd.some((a) => a.includes(marker))) pids.push(pid);
    } catch {
      // gone already
    }
  }
  return pids;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}

/** SIGTERM everything whose command line holds `marker`, SIGKILL what is left after 5 s. */
export async function killByArg(marker: string): Promise<void> {
  for (const pid of await pidsWithArg(marker)) signal(pid, "SIGTERM");
  try {
    await pollUntil(`processes with ${marker} to exit`, async () => (await pidsWithArg(marker)).length === 0, {
      timeoutMs: 5_000,
    });
  } catch {
    for (const pid of await pidsWithArg(marker)) signal(pid, "SIGKILL");
  }
}

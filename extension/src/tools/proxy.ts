// proxy_profiles and proxy_switch: the person's proxy profiles as agents see them, and a switch
// between them. A switch changes the proxy of the whole browser — the person's own tabs too — so it
// needs the person's own switch (traits.switch "proxy", checked by the gate) and each one is
// recorded in the audit with the profiles' names (SECURITY I-72).

import { describeProfile, profileProblems } from "../policy/proxy.js";
import { defineTool } from "./define.js";
import { proxySettings, switchNote, switchProfile } from "./proxystore.js";

export const proxyProfiles = defineTool<Record<string, never>>({
  name: "proxy_profiles",
  group: "proxy",
  description: "List the person's proxy profiles and the active one.",
  inputSchema: { type: "object", properties: {} },
  traits: { target: "none", reads: "none", effects: [], switch: "none", dialog: "ignores", handoff: "allowed" },
  async handler() {
    const s = await proxySettings();
    const profiles = s.profiles.map((p) => {
      const bad = profileProblems(p)[0];
      return { name: p.name, kind: p.kind, description: describeProfile(p), ...(p.name === s.active ? { active: true } : {}), ...(bad ? { invalid: `${bad.field}: ${bad.message}` } : {}) };
    });
    const lines = profiles.map((p) => `${p.active ? "* " : "  "}${p.name} (${p.kind}): ${p.description}${p.invalid ? ` — invalid, ${p.invalid}` : ""}`);
    const sw = s.agentMaySwitch
      ? "proxy_switch: allowed by the person (it changes the whole browser's proxy, the person's tabs too)"
      : 'proxy_switch: off; only the person can allow it ("Let agents switch the proxy profile" in the Torii options)';
    return { text: `${lines.join("\n")}\nactive: ${s.active}\n${sw}`, data: { profiles, active: s.active, switchAllowed: s.agentMaySwitch }, whole: true };
  },
});

export const proxySwitch = defineTool<{ name: string }>({
  name: "proxy_switch",
  group: "proxy",
  description: "Switch the whole browser's proxy profile: the person's tabs too.",
  inputSchema: { type: "object", properties: { name: { type: "string", minLength: 1, maxLength: 40 } }, required: ["name"] },
  traits: { target: "none", reads: "none", effects: ["identity"], switch: "proxy", dialog: "ignores", handoff: "allowed" },
  idempotent: true,
  timeoutMs: 15_000,
  async handler(a, ctx) {
    const r = await switchProfile(a.name);
    if (ctx.gate) ctx.gate.auditNote = switchNote(r.from, r.to.name);
    const desc = describeProfile(r.to);
    return {
      text: `proxy profile "${r.to.name}" (${desc}) is now active for the whole browser, every tab; it was "${r.from}"`,
      data: { active: r.to.name, previous: r.from, kind: r.to.kind, description: desc },
      whole: true,
    };
  },
});

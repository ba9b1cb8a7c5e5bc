// What each origin's pages carry so that a leak to the agent is found by string search: a marker in
// every page's text, a title, and a query value in every URL of B and C that A's pages use.
export type Role = "a" | "b" | "c";
export const ROLES: readonly Role[] = ["a", "b", "c"];
export type Attacker = "b" | "c";
export const ATTACKERS: readonly Attacker[] = ["b", "c"];

export const MARK: Record<Role, string> = {
  a: "A-ALLOWED-MARK-31f0",
  b: "B-ATTACKER-MARK-5d1e",
  c: "C-ATTACKER-MARK-9a7c",
};

export const TITLE: Record<Role, string> = {
  a: "A page",
  b: "B-Secret-Title-e82",
  c: "C-Secret-Title-4b6",
};

/** The query value every URL of an attacking page carries (s=…). */
export const QS: Record<Role, string> = {
  a: "qsa-allowed",
  b: "qsb-7f2c91",
  c: "qsc-0d3e55",
};

/** Text only opaque (sandboxed, data:) documents carry: by the rule, never returned. */
export const OPAQUE_MARK = "OPAQUE-DOC-MARK-c41a";

/** Background colours: a screenshot showing an attacker's pixels is found by colour. */
export const BG: Record<Role, [number, number, number]> = {
  a: [255, 255, 255],
  b: [255, 0, 255],
  c: [0, 255, 255],
};

export const css = (rgb: [number, number, number]) => `rgb(${rgb.join(",")})`;

/** Strings that must appear nowhere in what reaches the agent (hosts added by the rig). */
export const SECRET_STRINGS: readonly string[] = [MARK.b, MARK.c, TITLE.b, TITLE.c, QS.b, QS.c];

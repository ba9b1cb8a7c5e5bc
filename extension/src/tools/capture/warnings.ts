// What an export must say about each entry it cannot give whole: a body cut at the cap, a body or
// headers not kept and why, a value the person's switches withhold and which switch gives it.
// Shared by the HAR and the replay formatter, so both warn alike.

import { BODY_CAP, type Entry, type Omission, type Withheld } from "./model.js";

const WHY: Record<Omission, string> = {
  too_large: `over the ${BODY_CAP / 1024} KiB cap, truncated`,
  budget: "the capture byte budget was used up",
  file: "a file upload: the browser does not give its bytes",
  not_kept_by_browser: "the browser did not keep it",
  destination_off: "the destination's entry has no sensitive-capture switch",
  observe_off: "needs this origin's \"Console & network\" switch",
  multipart: "a multipart body: the browser gave its fields, not its bytes",
};

function why(o: Omission): string {
  return WHY[o];
}

/** SECURITY I-75: each withheld value named with the switch the person can change. */
const WITHHELD: Record<Withheld, string> = {
  cookies: 'cookies withheld (names and values): needs this origin\'s "Cookies" switch',
  httpOnly: 'HttpOnly cookie values withheld: need this origin\'s "HttpOnly values" switch',
  authorization: 'Authorization value withheld: needs this origin\'s "HttpOnly values" switch',
  proxy_authorization: "Proxy-Authorization value withheld: a proxy's credentials are never captured",
  body: `request body withheld: ${WHY.observe_off}`,
};

/** The entry's warnings, each one sentence; [] when it is whole (or was never meant to have more). */
export function entryWarnings(e: Entry, sensitive: boolean): string[] {
  if (e.blocked) return ["destination off the allowlist: not named, nothing of it kept"];
  if (!sensitive) return [];
  if (e.headersOmitted === "destination_off") return [`request headers and body not kept: ${why("destination_off")}`];
  const out: string[] = [];
  if (e.headersOmitted) out.push(`request headers incomplete: ${why(e.headersOmitted)}`);
  else if (!e.headers) out.push("request headers not seen (the request never reached the network)");
  const b = e.body;
  if (b?.omitted === "too_large") out.push(`request body truncated: ${b.kept} of ${b.size} bytes kept (cap ${BODY_CAP})`);
  else if (b?.omitted === "budget") out.push(`request body ${b.kept ? "truncated" : "omitted"}: ${why("budget")} (${b.kept} of ${b.size} bytes kept)`);
  else if (b?.omitted && b.omitted !== "observe_off") out.push(`request body omitted: ${why(b.omitted)}`);
  for (const w of e.withheld ?? []) out.push(WITHHELD[w]);
  return out;
}

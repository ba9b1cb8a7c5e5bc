// What an export must say about each entry it cannot give whole: a body cut at the cap, a body or
// headers not kept and why. Shared by the HAR and the replay formatter, so both warn alike.

import { BODY_CAP, type Entry, type Omission } from "./model.js";

const WHY: Record<Omission, string> = {
  too_large: `over the ${BODY_CAP / 1024} KiB cap, truncated`,
  budget: "the capture byte budget was used up",
  file: "a file upload: the browser does not give its bytes",
  not_kept_by_browser: "the browser did not keep it",
  destination_off: "the destination's entry has no sensitive-capture switch",
  multipart: "a multipart body: the browser gave its fields, not its bytes",
};

export function why(o: Omission): string {
  return WHY[o];
}

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
  else if (b?.omitted) out.push(`request body omitted: ${why(b.omitted)}`);
  return out;
}

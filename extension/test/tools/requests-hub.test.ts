// The worker's webRequest listeners, shared by capture sessions and network_tail: one set per tab
// someone captures, filtered to that tab, asking for request bodies and headers only where a
// consumer needs them (SECURITY I-67), every consumer of the tab fed, none left when none runs.
import { expect, it } from "vitest";

import { Ev } from "./listener-event.js";

const wr = { onBeforeRequest: new Ev(), onSendHeaders: new Ev(), onBeforeRedirect: new Ev(), onCompleted: new Ev(), onErrorOccurred: new Ev() };
(globalThis as { chrome?: unknown }).chrome = { webRequest: wr };

it("one set of listeners per tab needed, asking for what the neediest needs there, gone with the last", async () => {
  const { setNeed, typeAndLength } = await import("../../src/tools/capture/requests.js");
  const seen: string[] = [];
  const sink = (name: string) => ({
    before: (d: { requestId: string }) => void seen.push(`${name} before ${d.requestId}`),
    headers: () => void seen.push(`${name} headers`),
    redirect: () => undefined,
    completed: (d: { requestId: string }) => void seen.push(`${name} completed ${d.requestId}`),
    error: () => undefined,
  });
  const observe = sink("observe");
  const capture = sink("capture");
  const on = (...tabs: [number, "finished" | "metadata" | "sensitive"][]) => new Map(tabs);
  const listened = () => wr.onBeforeRequest.ls.map((l) => [l.tabId, l.opts]);
  const ended = () => wr.onCompleted.ls.map((l) => l.tabId);

  // network_tail alone: one event per request, its end (no start, no redirect).
  setNeed("observe", on([1, "finished"]), observe as never);
  expect(listened()).toEqual([]);
  expect(wr.onBeforeRedirect.ls).toHaveLength(0);
  expect(ended()).toEqual([1]);
  expect(wr.onErrorOccurred.ls.map((l) => l.tabId)).toEqual([1]);
  wr.onCompleted.fire({ tabId: 1, requestId: "f" });
  expect(seen).toEqual(["observe completed f"]);
  seen.length = 0;

  // Recording bodies, it needs starts too.
  setNeed("observe", on([1, "metadata"]), observe as never);
  expect(listened()).toEqual([[1, undefined]]);
  expect(ended()).toEqual([1]);
  expect(wr.onSendHeaders.ls).toHaveLength(0);
  // A request of a tab no one captures never reaches a consumer (the browser is not even asked).
  wr.onBeforeRequest.fire({ tabId: 9, requestId: "0" });
  expect(seen).toEqual([]);

  setNeed("capture", on([1, "metadata"], [2, "metadata"]), capture as never);
  expect(listened()).toEqual([[1, undefined], [2, undefined]]);
  wr.onBeforeRequest.fire({ tabId: 1, requestId: "1" });
  wr.onCompleted.fire({ tabId: 1, requestId: "1" });
  wr.onBeforeRequest.fire({ tabId: 2, requestId: "2" });
  expect(seen).toEqual(["observe before 1", "capture before 1", "observe completed 1", "capture completed 1", "capture before 2"]);

  // A sensitive capture on tab 2: bodies and headers asked for there only, still one set per tab.
  setNeed("capture", on([1, "metadata"], [2, "sensitive"]), capture as never);
  expect(listened()).toEqual([[1, undefined], [2, ["requestBody"]]]);
  expect(wr.onSendHeaders.ls.map((l) => [l.tabId, l.opts])).toEqual([[2, ["requestHeaders", "extraHeaders"]]]);

  // A consumer needing less on a tab never lowers what another needs there.
  setNeed("observe", on([1, "finished"], [2, "finished"]), observe as never);
  expect(listened()).toEqual([[1, undefined], [2, ["requestBody"]]]);

  // It ends: tab 2 has no listener left, tab 1 stays for network_tail (its ends only).
  setNeed("observe", on([1, "finished"]), observe as never);
  setNeed("capture", on(), capture as never);
  expect(listened()).toEqual([]);
  expect(ended()).toEqual([1]);
  expect(wr.onSendHeaders.ls).toHaveLength(0);
  setNeed("observe", on(), observe as never);
  for (const e of Object.values(wr)) expect(e.ls).toHaveLength(0);
  // Of the response headers only the media type and length are read.
  expect(typeAndLength([{ name: "Content-Type", value: "Application/JSON; charset=utf-8" }, { name: "content-length", value: "42" }, { name: "Set-Cookie", value: "x" }])).toEqual({ mimeType: "application/json", size: 42 });
});

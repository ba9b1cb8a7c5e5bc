// The worker's one set of webRequest listeners, shared by capture sessions and network_tail: one
// listener per event whatever the number of consumers, asking for request bodies and headers only
// while a consumer needs them (SECURITY I-67), every consumer fed, and none left when none runs.
import { expect, it } from "vitest";

import { Ev } from "./listener-event.js";

const wr = { onBeforeRequest: new Ev(), onSendHeaders: new Ev(), onBeforeRedirect: new Ev(), onCompleted: new Ev(), onErrorOccurred: new Ev() };
(globalThis as { chrome?: unknown }).chrome = { webRequest: wr };

it("one set of listeners for every consumer, asking for what the neediest needs, gone with the last", async () => {
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
  setNeed("observe", "metadata", observe as never);
  expect(wr.onBeforeRequest.ls.map((l) => l.opts)).toEqual([undefined]);
  expect(wr.onSendHeaders.ls).toHaveLength(0);
  setNeed("capture", "metadata", capture as never);
  expect(wr.onBeforeRequest.ls).toHaveLength(1);
  wr.onBeforeRequest.fire({ requestId: "1" });
  wr.onCompleted.fire({ requestId: "1" });
  expect(seen).toEqual(["observe before 1", "capture before 1", "observe completed 1", "capture completed 1"]);
  // A sensitive capture: bodies and headers asked for, still one listener per event.
  setNeed("capture", "sensitive", capture as never);
  expect(wr.onBeforeRequest.ls.map((l) => l.opts)).toEqual([["requestBody"]]);
  expect(wr.onSendHeaders.ls.map((l) => l.opts)).toEqual([["requestHeaders", "extraHeaders"]]);
  // It ends: back to metadata for network_tail alone.
  setNeed("capture", "off", capture as never);
  expect(wr.onBeforeRequest.ls.map((l) => l.opts)).toEqual([undefined]);
  expect(wr.onSendHeaders.ls).toHaveLength(0);
  setNeed("observe", "off", observe as never);
  for (const e of Object.values(wr)) expect(e.ls).toHaveLength(0);
  // Of the response headers only the media type and length are read.
  expect(typeAndLength([{ name: "Content-Type", value: "Application/JSON; charset=utf-8" }, { name: "content-length", value: "42" }, { name: "Set-Cookie", value: "x" }])).toEqual({ mimeType: "application/json", size: 42 });
});

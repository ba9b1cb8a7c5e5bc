// page.js entry: installs globalThis.__torii once per document (per frame). Injected by the
// service worker into the ISOLATED world with chrome.scripting.executeScript({files:["page.js"]});
// the worker then calls executeScript({func: (n, a) => globalThis.__torii.call(n, a), args: [n, a]}).
// A second injection keeps the existing instance, so the document's refs and docId survive.
import { Engine, PROTOCOL } from "./engine";

interface Installed {
  protocol: number;
  docId: string;
  call(name: string, args: unknown): Promise<unknown>;
}

const g = globalThis as unknown as { __torii?: Installed };
if (!g.__torii || g.__torii.protocol !== PROTOCOL) {
  const engine = new Engine();
  g.__torii = {
    protocol: PROTOCOL,
    docId: engine.docId,
    call: (name: string, args: unknown) => engine.call(name, args),
  };
}

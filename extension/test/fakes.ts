// Test doubles for the link: an in-memory chrome.storage area, a fake WebSocket, and a fake
// daemon that speaks the real protocol with real signatures (its key comes from the vectors).

import { fromB64url, randomBytes, toB64url } from "../src/shared/b64.js";
import { sign, verify } from "../src/shared/ecdsa.js";
import { authTranscript, otpProof, pairingCode, pairTranscript, type Bytes } from "../src/shared/transcript.js";
import type { CloseInfo, SocketLike } from "../src/background/socket.js";
import type { KV } from "../src/background/state.js";

export class MemoryKV implements KV {
  readonly data = new Map<string, unknown>();
  async get(keys: string[]): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const k of keys) if (this.data.has(k)) out[k] = this.data.get(k);
    return out;
  }
  async set(items: Record<string, unknown>): Promise<void> {
    for (const [k, v] of Object.entries(items)) this.data.set(k, v);
  }
  async remove(keys: string[]): Promise<void> {
    for (const k of keys) this.data.delete(k);
  }
}

export class FakeSocket implements SocketLike {
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: CloseInfo) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  readonly sent: Array<{ id?: number | string; method?: string; params?: Record<string, unknown>; result?: unknown }> = [];
  closed: CloseInfo | null = null;
  private closeDelivered: () => void = () => undefined;
  /** Resolves once the close reached onclose: whatever the link does about it, it has decided. */
  readonly closeSeen = new Promise<void>((r) => (this.closeDelivered = r));

  constructor(
    readonly url: string,
    private readonly onFrame: (s: FakeSocket, msg: Record<string, unknown>) => void,
    readonly protocols: string[] = [],
  ) {}

  send(data: string): void {
    if (this.closed) throw new Error("send on a closed socket");
    const msg = JSON.parse(data) as Record<string, unknown>;
    this.sent.push(msg);
    this.onFrame(this, msg);
  }

  close(code = 1005, reason = ""): void {
    if (this.closed) return;
    this.closed = { code, reason };
    setTimeout(() => {
      this.onclose?.({ code, reason });
      this.closeDelivered();
    }, 0);
  }

  /** The daemon side closes the socket. */
  serverClose(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = { code, reason };
    this.onclose?.({ code, reason });
    this.closeDelivered();
  }

  deliver(msg: object): void {
    if (!this.closed) this.onmessage?.({ data: JSON.stringify(msg) });
  }

  methods(): string[] {
    return this.sent.flatMap((m) => (typeof m.method === "string" ? [m.method] : []));
  }
}

export interface DaemonKey {
  priv: CryptoKey;
  raw: Uint8Array;
}

interface ConnState {
  connectionId: string;
  clientNonce: Uint8Array;
  serverNonce: Bytes;
  deviceId: string;
}

export type PairDecision = "approve" | "deny" | "hang";

/** A daemon that follows docs/protocol.md closely enough to drive every link path. */
export class FakeDaemon {
  readonly sockets: FakeSocket[] = [];
  readonly devices = new Map<string, Uint8Array>();
  readonly codes: string[] = [];
  readonly proofsOk: boolean[] = [];
  online = true;
  pairDecision: PairDecision = "approve";
  signPairReply = false;
  /** When set, this key is advertised in hello (an impostor or reinstalled daemon). */
  helloKey: DaemonKey | null = null;
  otp = "";
  rejectAuth = false;
  /** The name torii/auth reports for the device, as the daemon's store holds it. */
  daemonName = "Chrome on Linux";
  /** Names torii/device/rename refuses as another device's. */
  takenNames: string[] = [];
  private readonly conns = new WeakMap<FakeSocket, ConnState>();
  private n = 0;

  constructor(
    readonly key: DaemonKey,
    readonly origin: string,
  ) {}

  open = (url: string, protocols?: string[]): FakeSocket => {
    const s = new FakeSocket(url, (sock, msg) => void this.frame(sock, msg), protocols ?? []);
    this.sockets.push(s);
    setTimeout(() => {
      if (this.online) s.onopen?.({});
      else {
        s.onerror?.({});
        s.serverClose(1006, "");
      }
    }, 0);
    return s;
  };

  get last(): FakeSocket {
    return this.sockets[this.sockets.length - 1]!;
  }

  private async frame(s: FakeSocket, msg: Record<string, unknown>): Promise<void> {
    if (typeof msg.method !== "string" || msg.id === undefined) return;
    const id = msg.id as number;
    const p = (msg.params ?? {}) as Record<string, string>;
    const reply = (result: unknown): void => {
      setTimeout(() => s.deliver({ jsonrpc: "2.0", id, result }), 0);
    };
    const fail = (code: number, message: string): void => {
      setTimeout(() => s.deliver({ jsonrpc: "2.0", id, error: { code, message } }), 0);
    };
    const key = this.helloKey ?? this.key;
    switch (msg.method) {
      case "torii/hello": {
        const c: ConnState = {
          connectionId: `conn-${++this.n}`,
          clientNonce: fromB64url(p.clientNonce!),
          serverNonce: randomBytes(32) as Bytes,
          deviceId: p.deviceId ?? "",
        };
        this.conns.set(s, c);
        const devKey = this.devices.get(c.deviceId);
        const res: Record<string, unknown> = {
          protocol: 1,
          daemonId: "daemon-1",
          daemonKey: toB64url(key.raw),
          serverNonce: toB64url(c.serverNonce),
          connectionId: c.connectionId,
          paired: Boolean(devKey),
        };
        if (devKey) res.daemonSig = toB64url(await sign(key.priv, authTranscript("daemon", this.fields(c, devKey))));
        reply(res);
        return;
      }
      case "torii/pair": {
        const c = this.conns.get(s)!;
        const devKey = fromB64url(p.deviceKey!);
        const t = pairTranscript({
          requestId: p.requestId!,
          origin: this.origin,
          deviceKey: devKey,
          daemonKey: key.raw,
          clientNonce: c.clientNonce,
          serverNonce: c.serverNonce,
        });
        this.codes.push(await pairingCode(t));
        if (p.otpProof !== undefined) {
          const ok = toB64url(await otpProof(this.otp, t)) === p.otpProof;
          this.proofsOk.push(ok);
          if (!ok) return fail(-32003, "pairing_denied");
        } else if (this.pairDecision === "deny") {
          return fail(-32003, "pairing_denied");
        } else if (this.pairDecision === "hang") {
          return;
        }
        const deviceId = `dev-${this.devices.size + 1}`;
        this.devices.set(deviceId, devKey);
        c.deviceId = deviceId;
        const res: Record<string, unknown> = { deviceId, daemonKey: toB64url(key.raw) };
        if (this.signPairReply) res.daemonSig = toB64url(await sign(key.priv, authTranscript("daemon", this.fields(c, devKey))));
        reply(res);
        return;
      }
      case "torii/auth": {
        const c = this.conns.get(s)!;
        const devKey = this.devices.get(p.deviceId!);
        const ok =
          devKey !== undefined &&
          p.deviceId === c.deviceId &&
          (await verify(devKey, fromB64url(p.sig!), authTranscript("device", this.fields(c, devKey))));
        if (!ok || this.rejectAuth) {
          s.serverClose(1008, "authentication failed");
          return;
        }
        reply({ deviceId: p.deviceId, deviceName: this.daemonName, ticket: `tk${this.sockets.indexOf(s)}` });
        return;
      }
      case "initialize":
        reply({ protocolVersion: 1, agentCapabilities: { loadSession: false, mcpCapabilities: { acp: true } }, authMethods: [] });
        return;
      case "session/new":
        reply({ sessionId: "sess-1" });
        return;
      case "torii/ping":
        reply({ t: Date.now() });
        return;
      case "torii/device/rename": {
        const name = p.name ?? "";
        if (this.takenNames.includes(name)) {
          fail(-32602, `devices.rename: another device is already named "${name}"; pick another name`);
          return;
        }
        this.daemonName = name;
        reply({ name });
        return;
      }
      default:
        fail(-32601, "method not found");
    }
  }

  private fields(c: ConnState, deviceKey: Uint8Array) {
    return {
      connectionId: c.connectionId,
      deviceId: c.deviceId,
      origin: this.origin,
      deviceKey,
      daemonKey: (this.helloKey ?? this.key).raw,
      clientNonce: c.clientNonce,
      serverNonce: c.serverNonce,
    };
  }
}

export async function until(pred: () => boolean, what: string, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}


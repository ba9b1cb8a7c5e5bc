// The one WebSocket to the daemon: hello → pair or signed challenge → ACP initialize →
// session/new, kept alive by pings and re-established with capped backoff (docs/protocol.md).

import { bytesEqual, fromB64url, randomBytes, toB64url } from "../shared/b64.js";
import { backoffDelay } from "../shared/backoff.js";
import { sign, verify } from "../shared/ecdsa.js";
import { validateDaemonUrl, type LinkState, type LinkStatus } from "../shared/messages.js";
import { authTranscript, otpProof, pairingCode, pairTranscript, type AuthFields } from "../shared/transcript.js";
import { DaemonIdentityError, DeviceRejectedError, ProtocolError } from "./errors.js";
import type { Identity, IdentityStore } from "./identity.js";
import { RpcClosedError, RpcError, RpcPeer } from "./rpc.js";
import type { SocketFactory, SocketLike } from "./socket.js";
import type { Settings, SettingsStore, TicketStore } from "./state.js";

const PING_INTERVAL_MS = 20_000; // an idle MV3 worker is killed at 30 s
const PING_TIMEOUT_MS = 10_000;
const PAIR_TIMEOUT_MS = 130_000; // the daemon decides within 120 s
const OTP_LIFETIME_MS = 60_000;
export const REVOKED_REASON = "revoked — pair again";
export const NOT_PAIRED_REASON = "not paired";

/** Why a connection to the daemon never opened, with the two ways out: start it, or point the extension at it. */
export function unreachableReason(daemonUrl: string): string {
  return `cannot reach the daemon at ${daemonUrl} — is \`torii serve\` running? On another port (\`torii serve --listen 127.0.0.1:PORT\`), change the address in the popup under Connection settings → Daemon address`;
}

// Link-level JSON-RPC error codes (docs/protocol.md).
const PAIRING_DENIED = -32003;
const PAIRING_TIMEOUT = -32004;
const RATE_LIMITED = -32029;

export interface LinkDeps {
  settings: SettingsStore;
  /** Where the reconnect ticket outlives a stopped worker (SECURITY I-57): chrome.storage.session. */
  tickets: TicketStore;
  identity: IdentityStore;
  openSocket: SocketFactory;
  /** Our own origin, chrome-extension://<id>: the daemon sees it as the Origin header. */
  origin: string;
  clientInfo: { name: string; version: string };
  onState?: (s: LinkState) => void;
  /** The link is up (after session/new): the audit cross-check runs here (SECURITY I-70). */
  onConnected?: (daemonId: string) => void;
  random?: () => number;
  now?: () => number;
  log?: (msg: string) => void;
}

type Mode = "auth" | "pair";

interface Conn {
  ws: SocketLike;
  peer: RpcPeer;
  mode: Mode;
  /** Set when we close on purpose: onclose must then not schedule a reconnect. */
  intentional: boolean;
  /** The handshake got as far as torii/auth: a 1008 close now means the daemon refused us. */
  authSent: boolean;
  /** Why the last attempt failed, for the state's reason. */
  lastError: string;
  pingTimer: ReturnType<typeof setInterval> | null;
}

interface Hello {
  daemonId: string;
  daemonKey: Uint8Array;
  serverNonce: Uint8Array;
  connectionId: string;
  daemonSig?: Uint8Array;
  paired: boolean;
}

function obj(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ProtocolError(`${what}: expected an object`);
  return v as Record<string, unknown>;
}

function field(o: Record<string, unknown>, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== "string" || v === "") throw new ProtocolError(`${what}: missing ${key}`);
  return v;
}

function b64field(o: Record<string, unknown>, key: string, what: string): Uint8Array {
  try {
    return fromB64url(field(o, key, what));
  } catch (e) {
    if (e instanceof ProtocolError) throw e;
    throw new ProtocolError(`${what}: ${key} is not base64url`);
  }
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class Link {
  private settings: Settings | null = null;
  private status: LinkStatus = "disconnected";
  private reason = "";
  private code = "";
  private conn: Conn | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;
  private sessionId = "";
  /**
   * The daemon's reconnect ticket from the last torii/auth: our reserved way back in (SECURITY I-57).
   * Bound to the device it was issued to: offered by another, the daemon closes the connection.
   */
  private ticket: { deviceId: string; ticket: string } | null = null;
  // Managed launch: kept in memory only, used once, dropped when it expires (SECURITY I-5, I-10).
  private otp: { secret: string; url: string; expires: number } | null = null;
  private loading: Promise<Settings> | null = null;

  constructor(private readonly deps: LinkDeps) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private log(msg: string): void {
    // SECURITY I-10: callers pass only states and reasons, never secrets, proofs or signatures.
    this.deps.log?.(msg);
  }

  private async load(): Promise<Settings> {
    if (this.settings) return this.settings;
    this.loading ??= this.deps.settings.load().then(async (s) => {
      // A worker Chrome restarted picks up the ticket its predecessor was given (SECURITY I-57);
      // without it, its first reconnect would go the way a flood can hold.
      const t = s.deviceId ? await this.deps.tickets.load(s.deviceId).catch(() => "") : "";
      if (t && s.deviceId && !this.ticket) this.ticket = { deviceId: s.deviceId, ticket: t };
      this.settings = s;
      return s;
    });
    return this.loading;
  }

  private async reload(): Promise<Settings> {
    this.settings = await this.deps.settings.load();
    return this.settings;
  }

  private paired(s: Settings): boolean {
    return Boolean(s.deviceId && s.daemonKey);
  }

  state(): LinkState {
    const s = this.settings;
    return {
      status: this.status,
      reason: this.reason,
      deviceName: s?.deviceName ?? "",
      deviceId: s?.deviceId ?? "",
      daemonUrl: s?.daemonUrl ?? "",
      pairingCode: this.status === "pairing" ? this.code : "",
      paused: s?.paused ?? false,
      paired: s ? this.paired(s) : false,
    };
  }

  get currentSessionId(): string {
    return this.sessionId;
  }

  /**
   * Sends a request on the authenticated link (the side panel's ACP calls, background/panel.ts).
   * Fails at once with RpcClosedError while the link is not connected.
   */
  request(method: string, params: unknown, timeoutMs?: number): Promise<unknown> {
    const c = this.conn;
    if (!c || this.status !== "connected") return Promise.reject(new RpcClosedError(method));
    return c.peer.request(method, params, timeoutMs);
  }

  /** Sends a notification on the authenticated link; false when the link is down. */
  notify(method: string, params: unknown): boolean {
    const c = this.conn;
    if (!c || this.status !== "connected") return false;
    c.peer.notify(method, params);
    return true;
  }

  private set(status: LinkStatus, reason = ""): void {
    this.status = status;
    this.reason = reason;
    if (status !== "pairing") this.code = "";
    this.log(`link: ${status}${reason ? ` (${reason})` : ""}`);
    this.deps.onState?.(this.state());
  }

  /**
   * Worker start-up: resume the link if paired. A paused extension stays linked, so every tool
   * call is answered at once with `paused` rather than looking like a lost browser (SECURITY I-20).
   */
  async start(): Promise<LinkState> {
    const s = await this.load();
    if (this.paired(s)) this.connect("auth");
    else this.set("disconnected", NOT_PAIRED_REASON);
    return this.state();
  }

  /** Alarm backstop: reconnect if the link should be up and nothing is already trying. */
  async kick(): Promise<void> {
    const s = await this.load();
    if (this.conn || this.retryTimer) return;
    if (this.paired(s)) {
      this.attempt = 0;
      this.connect("auth");
    }
  }

  /** The person pressed Pair: a fresh identity and a code to compare with `torii pair`. */
  async pair(daemonUrl?: string): Promise<LinkState> {
    await this.load();
    if (daemonUrl !== undefined) await this.setUrl(daemonUrl);
    await this.deps.settings.update({ paused: false });
    await this.reload();
    this.attempt = 0;
    this.connect("pair");
    return this.state();
  }

  /** Managed launch: pair with the one-time secret from the connect page, with no clicks. */
  async connectManaged(daemonUrl: string, secret: string): Promise<LinkState> {
    if (secret === "") throw new ProtocolError("missing one-time secret");
    const s0 = await this.load();
    const url = validateDaemonUrl(daemonUrl);
    const sameDaemon = s0.daemonUrl === url && this.paired(s0);
    await this.deps.settings.update({ daemonUrl: url, paused: false });
    const s = await this.reload();
    this.otp = { secret, url, expires: this.now() + OTP_LIFETIME_MS };
    this.attempt = 0;
    if (sameDaemon && this.status === "connected") {
      this.otp = null; // already up with this daemon: nothing to pair
      this.set("connected");
    } else {
      // Already paired with this address: try the signed challenge first; if the daemon no
      // longer knows us, the pending secret pairs again (see rejected()).
      this.connect(sameDaemon && this.paired(s) ? "auth" : "pair");
    }
    return this.state();
  }

  async unpair(): Promise<LinkState> {
    await this.load();
    this.otp = null;
    this.closeConn(1000, "unpaired");
    await this.forget();
    this.set("disconnected", NOT_PAIRED_REASON);
    return this.state();
  }

  async setPaused(paused: boolean): Promise<LinkState> {
    await this.load();
    await this.deps.settings.update({ paused });
    const s = await this.reload();
    // Pause keeps the link: the tool gate refuses every call with `paused` and stops the ones in
    // flight (tools/gate.ts, mcp/index.ts); the state tells every page.
    if (!paused && !this.conn && !this.retryTimer && this.paired(s)) {
      this.attempt = 0;
      this.connect("auth");
    } else {
      this.deps.onState?.(this.state());
    }
    return this.state();
  }

  async setDeviceName(name: string): Promise<LinkState> {
    await this.load();
    const clean = name.replace(/\s+/g, " ").trim().slice(0, 64);
    if (clean === "") throw new ProtocolError("the device name must not be empty");
    let stored = clean;
    const c = this.conn;
    if (c && this.status === "connected") {
      // Paired and connected: the daemon's device store holds the name `torii status`, `--browser`
      // and agents' notices use, distinct per browser; it may refuse one another device has.
      try {
        const r = await c.peer.request("torii/device/rename", { name: clean });
        const n = (r as { name?: unknown } | null)?.name;
        if (typeof n === "string" && n !== "") stored = n;
      } catch (e) {
        if (e instanceof RpcError) throw new ProtocolError(e.message);
        throw e;
      }
    }
    await this.deps.settings.update({ deviceName: stored });
    await this.reload();
    this.deps.onState?.(this.state());
    return this.state();
  }

  async setDaemonUrl(url: string): Promise<LinkState> {
    await this.load();
    const changed = await this.setUrl(url);
    const s = await this.reload();
    if (changed && !s.paused && this.paired(s)) {
      this.attempt = 0;
      this.connect("auth");
    } else {
      this.deps.onState?.(this.state());
    }
    return this.state();
  }

  private async setUrl(url: string): Promise<boolean> {
    const clean = validateDaemonUrl(url);
    const s = await this.load();
    if (clean === s.daemonUrl) return false;
    await this.deps.settings.update({ daemonUrl: clean });
    await this.reload();
    return true;
  }

  private async forget(): Promise<void> {
    this.ticket = null;
    await this.deps.tickets.clear().catch(() => undefined);
    await this.deps.settings.clearPairing();
    await this.deps.identity.clear();
    await this.reload();
  }

  private cancelRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private closeConn(code: number, reason: string): void {
    this.cancelRetry();
    const c = this.conn;
    if (!c) return;
    this.conn = null;
    c.intentional = true;
    this.teardown(c);
    try {
      c.ws.close(code, reason);
    } catch {
      // already closed
    }
  }

  private teardown(c: Conn): void {
    if (c.pingTimer) clearInterval(c.pingTimer);
    c.pingTimer = null;
    c.peer.close();
  }

  private validOtp(): { secret: string; url: string } | null {
    const o = this.otp;
    if (!o) return null;
    if (this.now() > o.expires || o.url !== this.settings?.daemonUrl) {
      this.otp = null;
      return null;
    }
    return o;
  }

  private connect(mode: Mode): void {
    this.closeConn(1000, "reconnecting");
    const s = this.settings;
    if (!s) return;
    this.set(mode === "pair" ? "pairing" : "connecting");
    let ws: SocketLike;
    try {
      // The daemon selects "acp.v1"; the ticket only chooses the slot this connection takes.
      const tk = mode === "auth" && this.ticket?.deviceId === s.deviceId ? this.ticket?.ticket : "";
      ws = this.deps.openSocket(s.daemonUrl, tk ? ["acp.v1", `torii.ticket.${tk}`] : undefined);
    } catch (e) {
      this.failed(mode, `cannot open ${s.daemonUrl}: ${errText(e)}`);
      return;
    }
    const c: Conn = {
      ws,
      peer: new RpcPeer({ send: (t) => ws.send(t) }),
      mode,
      intentional: false,
      authSent: false,
      lastError: "",
      pingTimer: null,
    };
    c.peer.handle("torii/ping", () => ({ t: Date.now() }));
    this.conn = c;
    ws.onmessage = (ev) => {
      if (typeof ev.data === "string") c.peer.receive(ev.data);
    };
    ws.onerror = () => {
      c.lastError ||= unreachableReason(s.daemonUrl);
    };
    ws.onclose = (ev) => this.onClose(c, ev.code, ev.reason);
    ws.onopen = () => {
      this.handshake(c).catch((e: unknown) => this.onHandshakeError(c, e));
    };
  }

  private async hello(c: Conn, deviceId: string, clientNonce: Uint8Array): Promise<Hello> {
    const raw = await c.peer.request("torii/hello", { protocol: 1, deviceId, clientNonce: toB64url(clientNonce) });
    const r = obj(raw, "torii/hello");
    if (r.protocol !== 1) throw new ProtocolError(`torii/hello: unsupported protocol ${String(r.protocol)}`);
    const h: Hello = {
      daemonId: field(r, "daemonId", "torii/hello"),
      daemonKey: b64field(r, "daemonKey", "torii/hello"),
      serverNonce: b64field(r, "serverNonce", "torii/hello"),
      connectionId: field(r, "connectionId", "torii/hello"),
      paired: r.paired !== false,
    };
    if (typeof r.daemonSig === "string" && r.daemonSig !== "") h.daemonSig = b64field(r, "daemonSig", "torii/hello");
    return h;
  }

  private async handshake(c: Conn): Promise<void> {
    const s = await this.load();
    const clientNonce = randomBytes(32);
    if (c.mode === "auth") {
      const identity = await this.deps.identity.load();
      if (!identity || !s.deviceId || !s.daemonKey) {
        // Storage and IndexedDB disagree (e.g. site data cleared): the pairing cannot be used.
        throw new DeviceRejectedError("the device key is gone");
      }
      const h = await this.hello(c, s.deviceId, clientNonce);
      if (this.conn !== c) return;
      // SECURITY I-6: the daemon must prove it holds the pinned key before we sign anything.
      if (!bytesEqual(h.daemonKey, fromB64url(s.daemonKey))) {
        throw new DaemonIdentityError("the daemon's key is not the one this browser paired with");
      }
      if (!h.paired) throw new DeviceRejectedError("the daemon does not know this device");
      const fields: AuthFields = {
        connectionId: h.connectionId,
        deviceId: s.deviceId,
        origin: this.deps.origin,
        deviceKey: identity.publicRaw,
        daemonKey: h.daemonKey,
        clientNonce,
        serverNonce: h.serverNonce,
      };
      await this.verifyDaemon(h.daemonKey, h.daemonSig, fields);
      await this.authenticate(c, fields, identity);
      return;
    }

    // Pairing: a fresh identity, used only if the person (or the one-time secret) approves.
    const identity = await this.deps.identity.generate();
    const h = await this.hello(c, "", clientNonce);
    if (this.conn !== c) return;
    const requestId = crypto.randomUUID();
    const transcript = pairTranscript({
      requestId,
      origin: this.deps.origin,
      deviceKey: identity.publicRaw,
      daemonKey: h.daemonKey,
      clientNonce,
      serverNonce: h.serverNonce,
    });
    this.code = await pairingCode(transcript);
    const params: Record<string, string> = {
      requestId,
      deviceKey: toB64url(identity.publicRaw),
      deviceName: s.deviceName,
    };
    const otp = this.validOtp();
    if (otp) {
      // SECURITY I-5: the secret is single use: it is spent on this attempt whatever the outcome.
      params.otpProof = toB64url(await otpProof(otp.secret, transcript));
      this.otp = null;
    }
    if (this.conn !== c) return;
    this.set("pairing", otp ? "approving with the one-time secret" : "compare the code with `torii pair`");
    const raw = await c.peer.request("torii/pair", params, PAIR_TIMEOUT_MS);
    const r = obj(raw, "torii/pair");
    const deviceId = field(r, "deviceId", "torii/pair");
    // The key the person approved is the one in the transcript; any other is an impostor.
    if (!bytesEqual(b64field(r, "daemonKey", "torii/pair"), h.daemonKey)) {
      throw new DaemonIdentityError("the daemon changed its key during pairing");
    }
    await this.deps.identity.save(identity);
    await this.deps.settings.savePairing({ deviceId, daemonKey: toB64url(h.daemonKey), daemonId: h.daemonId });
    await this.reload();
    if (this.conn !== c) return;
    const sig = typeof r.daemonSig === "string" && r.daemonSig !== "" ? b64field(r, "daemonSig", "torii/pair") : undefined;
    if (!sig) {
      // SECURITY I-6: without a daemon signature on this connection we must not sign on it;
      // a new connection runs the full mutual challenge.
      this.log("link: paired; reconnecting for the signed challenge");
      this.attempt = 0;
      this.connect("auth");
      return;
    }
    const fields: AuthFields = {
      connectionId: h.connectionId,
      deviceId,
      origin: this.deps.origin,
      deviceKey: identity.publicRaw,
      daemonKey: h.daemonKey,
      clientNonce,
      serverNonce: h.serverNonce,
    };
    await this.verifyDaemon(h.daemonKey, sig, fields);
    await this.authenticate(c, fields, identity);
  }

  private async verifyDaemon(daemonKey: Uint8Array, sig: Uint8Array | undefined, f: AuthFields): Promise<void> {
    // SECURITY I-6: verified against the pinned key before any device signature exists.
    if (!sig) throw new DaemonIdentityError("the daemon did not sign the challenge");
    if (!(await verify(daemonKey, sig, authTranscript("daemon", f)))) {
      throw new DaemonIdentityError("the daemon's signature does not verify");
    }
  }

  private async authenticate(c: Conn, f: AuthFields, identity: Identity): Promise<void> {
    if (this.conn !== c) return;
    this.set("authenticating");
    const sig = await sign(identity.privateKey, authTranscript("device", f));
    c.authSent = true;
    try {
      const auth = await c.peer.request("torii/auth", { deviceId: f.deviceId, sig: toB64url(sig) });
      const ticket = (auth as { ticket?: unknown } | null)?.ticket;
      const daemonName = (auth as { deviceName?: unknown } | null)?.deviceName;
      // Kept only while this device is still ours: an unpair during the request has cleared it.
      if (this.settings?.deviceId === f.deviceId) {
        // The daemon's name for this browser (made distinct, or given by `torii launch`) is the one the popup shows.
        if (typeof daemonName === "string" && daemonName !== "" && daemonName.length <= 64 && daemonName !== this.settings.deviceName) {
          this.settings.deviceName = daemonName;
          await this.deps.settings.update({ deviceName: daemonName }).catch(() => undefined);
        }
        if (typeof ticket === "string" && /^[A-Za-z0-9_-]{1,128}$/.test(ticket)) {
          this.ticket = { deviceId: f.deviceId, ticket };
          await this.deps.tickets.save(f.deviceId, ticket).catch(() => undefined);
        } else {
          this.ticket = null;
          await this.deps.tickets.clear().catch(() => undefined);
        }
      }
    } catch (e) {
      if (e instanceof RpcError) throw new DeviceRejectedError(`the daemon refused this device: ${e.message}`);
      throw e;
    }
    if (this.conn !== c) return;
    const init = obj(
      await c.peer.request("initialize", {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: this.deps.clientInfo,
      }),
      "initialize",
    );
    if (init.protocolVersion !== 1) throw new ProtocolError(`initialize: unsupported ACP protocol ${String(init.protocolVersion)}`);
    const s = await this.load();
    const sess = obj(
      await c.peer.request("session/new", {
        cwd: "/",
        mcpServers: [{ type: "acp", name: "torii", id: s.serverId }],
      }),
      "session/new",
    );
    this.sessionId = field(sess, "sessionId", "session/new");
    if (this.conn !== c) return;
    this.attempt = 0;
    c.pingTimer = setInterval(() => {
      c.peer.request("torii/ping", {}, PING_TIMEOUT_MS).catch(() => {
        if (this.conn === c) {
          c.lastError = "the daemon stopped answering";
          try {
            c.ws.close(4000, "ping timeout");
          } catch {
            // already closing
          }
        }
      });
    }, PING_INTERVAL_MS);
    this.set("connected");
    this.deps.onConnected?.(this.settings?.daemonId ?? "");
  }

  private onHandshakeError(c: Conn, e: unknown): void {
    if (this.conn !== c) return;
    if (e instanceof DaemonIdentityError) {
      this.log(`link: daemon identity check failed: ${e.message}`);
      this.closeConn(1008, "daemon identity");
      if (this.validOtp()) {
        // A managed launch carries a fresh secret from the daemon that started this browser.
        void this.forget().then(() => this.connect("pair"));
        return;
      }
      this.set("error", `${e.message} — unpair and pair again if the daemon was reinstalled`);
      return;
    }
    if (e instanceof DeviceRejectedError) {
      void this.rejected();
      return;
    }
    if (e instanceof RpcError && c.mode === "pair" && !c.authSent) {
      this.closeConn(1000, "pairing ended");
      const why =
        e.code === PAIRING_DENIED
          ? "pairing denied in the terminal"
          : e.code === PAIRING_TIMEOUT
            ? "nobody approved the code within 2 minutes — press Pair to try again"
            : e.code === RATE_LIMITED
              ? "too many pairing attempts — wait a minute and try again"
              : `pairing failed: ${e.message}`;
      this.set("disconnected", why);
      return;
    }
    if (e instanceof ProtocolError || e instanceof RpcError) {
      c.lastError = e.message;
    } else if (!(e instanceof RpcClosedError)) {
      c.lastError ||= errText(e);
    }
    // Transient: drop the socket; onclose schedules the retry.
    try {
      c.ws.close(4000, "handshake failed");
    } catch {
      // already closing
    }
  }

  /** The daemon refused this device: forget the pairing and wait for the person (or a secret). */
  private async rejected(): Promise<void> {
    this.closeConn(1000, "rejected");
    await this.forget();
    if (this.validOtp()) {
      this.connect("pair");
      return;
    }
    this.set("disconnected", REVOKED_REASON);
  }

  private onClose(c: Conn, code: number, reason: string): void {
    if (this.conn !== c) return; // a socket we already replaced or closed on purpose
    this.conn = null;
    this.teardown(c);
    if (c.intentional) return;
    if (code === 1008 && (/revoked/i.test(reason) || c.authSent)) {
      void this.rejected();
      return;
    }
    const s = this.settings;
    // A gateway replica restarting (1012) or going away (1001) asks us to come back, which another
    // replica can take at once: the first retry is immediate, later ones back off with jitter. Only
    // after a link that had come up (attempt 0), so a gateway that keeps refusing cannot spin us.
    if ((code === 1012 || code === 1001) && c.mode === "auth" && this.attempt === 0 && s && this.paired(s)) {
      this.attempt = 1;
      this.connect("auth");
      if (this.conn && this.status === "connecting") this.set("connecting", `${reason || "the gateway is restarting"}; reconnecting now`);
      return;
    }
    const why = c.lastError || (reason ? `closed: ${reason}` : unreachableReason(s?.daemonUrl ?? "?"));
    this.failed(c.mode, why);
  }

  private failed(mode: Mode, why: string): void {
    const s = this.settings;
    if (!s) return;
    if (mode === "pair" && !this.paired(s)) {
      if (this.validOtp()) {
        this.scheduleRetry("pair", why); // managed launch: the daemon may still be starting
        return;
      }
      this.set("disconnected", why.includes("torii serve") ? why : `${why} — is \`torii serve\` running?`);
      return;
    }
    if (!this.paired(s)) {
      this.set("disconnected", NOT_PAIRED_REASON);
      return;
    }
    this.scheduleRetry("auth", why);
  }

  private scheduleRetry(mode: Mode, why: string): void {
    this.cancelRetry();
    const delay = backoffDelay(this.attempt++, this.deps.random);
    this.set(mode === "pair" ? "pairing" : "connecting", `${why}; retrying in ${(delay / 1000).toFixed(1)} s`);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect(mode);
    }, delay);
  }
}

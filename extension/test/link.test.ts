import { describe, expect, it } from "vitest";
import { MemoryIdentityStore } from "../src/background/identity.js";
import { Link, NOT_PAIRED_REASON, REVOKED_REASON, unreachableReason } from "../src/background/link.js";
import { SettingsStore, TicketStore } from "../src/background/state.js";
import { fromB64url, toB64url } from "../src/shared/b64.js";
import { exportPublicKey, generateKeyPair } from "../src/shared/ecdsa.js";
import type { LinkState } from "../src/shared/messages.js";
import { FakeDaemon, MemoryKV, until } from "./fakes.js";
import { importSigningKey, vectors } from "./vectors.js";

const ORIGIN = "chrome-extension://fljdejdpnpnjkonefefacbenoijnhcih";

async function setup() {
  const key = { priv: await importSigningKey(vectors.keys.daemon), raw: fromB64url(vectors.keys.daemon.rawB64) };
  const daemon = new FakeDaemon(key, ORIGIN);
  const kv = new MemoryKV();
  const session = new MemoryKV(); // chrome.storage.session: outlives a worker, not the browser
  const ids = new MemoryIdentityStore();
  const states: LinkState[] = [];
  const make = (random: () => number = () => 0) =>
    new Link({
      settings: new SettingsStore(kv, "Linux x86_64"),
      tickets: new TicketStore(session),
      identity: ids,
      openSocket: daemon.open,
      origin: ORIGIN,
      clientInfo: { name: "torii-test", version: "0" },
      onState: (s) => states.push(s),
      random, // default: shortest jitter, 125 ms first retry
    });
  const link = make();
  /** Puts the browser in the state a finished pairing leaves it in. */
  const prePair = async () => {
    const id = await ids.generate();
    await ids.save(id);
    daemon.devices.set("dev-1", id.publicRaw);
    await kv.set({ deviceId: "dev-1", daemonKey: toB64url(key.raw), daemonId: "daemon-1" });
  };
  return { daemon, kv, session, ids, states, link, make, prePair, key };
}

/**
 * No reconnect follows: the last socket's close, if any, has reached the link, which announces a
 * retry in its state as it schedules one; none did, and no other socket opened.
 */
async function noRetry(t: Awaited<ReturnType<typeof setup>>): Promise<void> {
  const last = t.daemon.sockets.at(-1);
  if (last?.closed) await last.closeSeen;
  expect(t.states.map((s) => s.reason).filter((r) => /retrying/.test(r))).toEqual([]);
  expect(t.daemon.sockets).toHaveLength(1);
}

async function otherKey() {
  const pair = await generateKeyPair();
  return { priv: pair.privateKey, raw: await exportPublicKey(pair.publicKey) };
}

describe("Link", () => {
  it("starts unpaired without opening a socket", async () => {
    const t = await setup();
    const s = await t.link.start();
    expect(s).toMatchObject({ status: "disconnected", reason: NOT_PAIRED_REASON, paired: false, deviceName: "Chrome on Linux" });
    expect(s.daemonUrl).toBe("ws://127.0.0.1:7317/acp");
    await t.link.kick();
    expect(t.daemon.sockets).toHaveLength(0);
  });

  it("pairs by code, then runs the full signed challenge on a new connection and opens an ACP session", async () => {
    const t = await setup();
    await t.link.start();
    await t.link.pair();
    await until(() => t.link.state().status === "connected", "connected");

    const shown = t.states.find((s) => s.status === "pairing" && s.pairingCode !== "");
    expect(shown?.pairingCode).toMatch(/^\d{6}$/);
    expect(shown?.pairingCode).toBe(t.daemon.codes[0]); // both sides derived the same code

    const [first, second] = t.daemon.sockets;
    // SECURITY I-6: no daemon signature on the pairing connection, so no device signature there.
    expect(first!.methods()).toEqual(["torii/hello", "torii/pair"]);
    expect(second!.methods()).toEqual(["torii/hello", "torii/auth", "initialize", "session/new"]);
    expect(second!.sent[0]!.params).toMatchObject({ protocol: 1, deviceId: "dev-1" });

    const sessionNew = second!.sent.find((m) => m.method === "session/new")!;
    expect(sessionNew.params).toEqual({ cwd: "/", mcpServers: [{ type: "acp", name: "torii", id: t.kv.data.get("serverId") }] });
    expect(t.kv.data.get("serverId")).toMatch(/^[0-9a-f-]{36}$/);
    expect(t.kv.data.get("deviceId")).toBe("dev-1");
    expect(t.kv.data.get("daemonKey")).toBe(vectors.keys.daemon.rawB64);
    const id = await t.ids.load();
    expect(id?.privateKey.extractable).toBe(false);
    expect(t.link.state()).toMatchObject({ paired: true, deviceId: "dev-1", pairingCode: "", reason: "" });
    expect(t.link.currentSessionId).toBe("sess-1");
  });

  it("authenticates on the pairing connection when the pair reply carries a daemon signature", async () => {
    const t = await setup();
    t.daemon.signPairReply = true;
    await t.link.start();
    await t.link.pair();
    await until(() => t.link.state().status === "connected", "connected");
    expect(t.daemon.sockets).toHaveLength(1);
    expect(t.daemon.last.methods()).toEqual(["torii/hello", "torii/pair", "torii/auth", "initialize", "session/new"]);
  });

  it("pairs a managed launch with the one-time secret and no clicks; the secret never goes on the wire", async () => {
    const t = await setup();
    t.daemon.otp = "one-time-secret-123";
    t.daemon.pairDecision = "deny"; // a person would say no: only the proof can approve
    await t.link.start();
    await t.link.connectManaged("ws://127.0.0.1:7444/acp", "one-time-secret-123");
    await until(() => t.link.state().status === "connected", "connected");
    expect(t.daemon.proofsOk).toEqual([true]);
    expect(t.daemon.sockets[0]!.url).toBe("ws://127.0.0.1:7444/acp");
    const wire = JSON.stringify(t.daemon.sockets.map((s) => s.sent));
    expect(wire).not.toContain("one-time-secret-123");
    expect(t.kv.data.get("daemonUrl")).toBe("ws://127.0.0.1:7444/acp");
  });

  it("refuses to sign when the daemon's key differs from the pinned one", async () => {
    const t = await setup();
    await t.prePair();
    t.daemon.helloKey = await otherKey();
    await t.link.start();
    await until(() => t.link.state().status === "error", "error state");
    expect(t.daemon.sockets).toHaveLength(1);
    expect(t.daemon.last.methods()).toEqual(["torii/hello"]); // no torii/auth, no device signature
    expect(t.daemon.last.closed).not.toBeNull();
    expect(t.link.state().reason).toMatch(/key/);
    await noRetry(t); // no reconnect storm against an impostor
    expect(t.kv.data.get("deviceId")).toBe("dev-1"); // an impostor cannot unpair us
  });

  it("refuses to sign when the daemon's signature does not verify under the pinned key", async () => {
    const t = await setup();
    await t.prePair();
    const forger = await otherKey();
    t.daemon.helloKey = { priv: forger.priv, raw: t.key.raw }; // claims the pinned key, cannot sign for it
    await t.link.start();
    await until(() => t.link.state().status === "error", "error state");
    expect(t.daemon.last.methods()).toEqual(["torii/hello"]);
    expect(t.link.state().reason).toMatch(/signature/);
  });

  it("a 'device revoked' close clears the pairing and waits for the person", async () => {
    const t = await setup();
    await t.prePair();
    await t.link.start();
    await until(() => t.link.state().status === "connected", "connected");
    t.daemon.last.serverClose(1008, "device revoked");
    await until(() => t.link.state().status === "disconnected", "disconnected");
    expect(t.link.state()).toMatchObject({ reason: REVOKED_REASON, paired: false, deviceId: "" });
    expect(t.kv.data.has("deviceId")).toBe(false);
    expect(t.kv.data.has("daemonKey")).toBe(false);
    expect(await t.ids.load()).toBeNull();
    await noRetry(t);
    await t.link.kick();
    expect(t.daemon.sockets).toHaveLength(1);
  });

  it("a refused torii/auth clears the pairing", async () => {
    const t = await setup();
    await t.prePair();
    t.daemon.rejectAuth = true;
    await t.link.start();
    await until(() => t.link.state().status === "disconnected", "disconnected");
    expect(t.link.state().reason).toBe(REVOKED_REASON);
    expect(t.kv.data.has("deviceId")).toBe(false);
    await noRetry(t);
  });

  it("a daemon that no longer knows the device (paired:false) counts as revoked", async () => {
    const t = await setup();
    await t.prePair();
    t.daemon.devices.clear();
    await t.link.start();
    await until(() => t.link.state().status === "disconnected", "disconnected");
    expect(t.link.state().reason).toBe(REVOKED_REASON);
    expect(t.daemon.last.methods()).toEqual(["torii/hello"]);
  });

  it("reconnects with backoff when the daemon goes away and comes back", async () => {
    const t = await setup();
    await t.prePair();
    await t.link.start();
    await until(() => t.link.state().status === "connected", "connected");
    t.daemon.online = false;
    t.daemon.last.serverClose(1006, "");
    await until(() => t.link.state().status === "connecting" && /retrying/.test(t.link.state().reason), "retrying");
    await until(() => t.daemon.sockets.length >= 3, "several attempts");
    t.daemon.online = true;
    await until(() => t.link.state().status === "connected", "reconnected", 5000);
    expect(t.daemon.last.methods()).toContain("torii/auth");
  });

  for (const code of [1012, 1001]) {
    it(`reconnects at once when the gateway closes with ${code}, then backs off`, async () => {
      const t = await setup();
      await t.prePair();
      // Jitter at its longest: an immediate reconnect cannot be mistaken for the first backoff.
      const link = t.make(() => 0.999);
      await link.start();
      await until(() => link.state().status === "connected", "connected");
      const first = t.daemon.last;
      first.serverClose(code, "service restart: reconnect");
      // No timer runs before the new socket: it opens in the same turn the close arrives.
      expect(t.daemon.sockets).toHaveLength(2);
      expect(link.state()).toMatchObject({ status: "connecting" });
      expect(link.state().reason).toMatch(/reconnecting now/);
      await until(() => link.state().status === "connected", "reconnected");
      expect(t.daemon.last.methods()).toContain("torii/auth");

      // The next restart, while the new link is not up yet, waits with backoff instead of spinning.
      t.daemon.online = false;
      t.daemon.last.serverClose(code, "service restart: reconnect");
      expect(t.daemon.sockets).toHaveLength(3);
      await until(() => /retrying in/.test(link.state().reason), "backing off");
    });
  }

  it("pause keeps the link up (calls are refused with paused) and survives a restart", async () => {
    const t = await setup();
    await t.prePair();
    await t.link.start();
    await until(() => t.link.state().status === "connected", "connected");
    await t.link.setPaused(true);
    expect(t.link.state()).toMatchObject({ status: "connected", paused: true });
    expect(t.daemon.last.closed).toBeNull();
    await t.link.kick();
    expect(t.daemon.sockets).toHaveLength(1);
    // A restarted worker stays paused too (and linked, so the gate can answer `paused`).
    const again = t.make();
    expect((await again.start()).paused).toBe(true);
    await t.link.setPaused(false);
    expect(t.link.state()).toMatchObject({ status: "connected", paused: false });
  });

  it("a denied pairing ends in disconnected with the reason and no retry", async () => {
    const t = await setup();
    t.daemon.pairDecision = "deny";
    await t.link.start();
    await t.link.pair();
    await until(() => t.link.state().status === "disconnected", "disconnected");
    expect(t.link.state().reason).toMatch(/denied/);
    expect(t.link.state().paired).toBe(false);
    expect(await t.ids.load()).toBeNull();
    await noRetry(t);
  });

  it("an unreachable daemon during Pair says so instead of retrying forever", async () => {
    const t = await setup();
    t.daemon.online = false;
    await t.link.start();
    await t.link.pair();
    await until(() => t.link.state().status === "disconnected", "disconnected");
    expect(t.link.state().reason).toBe(unreachableReason(t.link.state().daemonUrl));
    expect(t.link.state().reason).toMatch(/torii serve.*Connection settings → Daemon address/);
  });

  it("a restarted worker resumes from storage and IndexedDB", async () => {
    const t = await setup();
    await t.link.start();
    await t.link.pair();
    await until(() => t.link.state().status === "connected", "connected");
    const restarted = t.make();
    await restarted.start();
    await until(() => restarted.state().status === "connected", "resumed");
    expect(t.daemon.last.methods()).toEqual(["torii/hello", "torii/auth", "initialize", "session/new"]);
  });

  it("a reconnect offers the ticket of the last torii/auth (SECURITY I-57)", async () => {
    const t = await setup();
    await t.prePair();
    await t.link.start();
    await until(() => t.link.state().status === "connected", "connected");
    expect(t.daemon.sockets[0]!.protocols).toEqual([]); // nothing to offer before the first auth
    t.daemon.last.serverClose(1001, "going away");
    await until(() => t.daemon.sockets.length === 2 && t.link.state().status === "connected", "reconnected");
    expect(t.daemon.sockets[1]!.protocols).toEqual(["acp.v1", "torii.ticket.tk0"]);
  });

  it("a restarted worker offers the ticket its predecessor was given (SECURITY I-57)", async () => {
    const t = await setup();
    await t.prePair();
    await t.link.start();
    await until(() => t.link.state().status === "connected", "connected");
    expect(t.session.data.get("linkTicket")).toEqual({ deviceId: "dev-1", ticket: "tk0" });
    // Chrome stopped the worker: a new one starts with nothing in memory but the same storage.
    const next = t.make();
    await next.start();
    await until(() => t.daemon.sockets.length === 2 && next.state().status === "connected", "the new worker connected");
    expect(t.daemon.sockets[1]!.protocols).toEqual(["acp.v1", "torii.ticket.tk0"]);
    expect(t.session.data.get("linkTicket")).toEqual({ deviceId: "dev-1", ticket: "tk1" });
  });

  it("never offers a stored ticket of another device", async () => {
    const t = await setup();
    await t.prePair();
    await t.session.set({ linkTicket: { deviceId: "dev-old", ticket: "stale" } });
    await t.link.start();
    await until(() => t.link.state().status === "connected", "connected");
    expect(t.daemon.sockets[0]!.protocols).toEqual([]);
  });

  it("unpair forgets the identity and the pinned key", async () => {
    const t = await setup();
    await t.prePair();
    await t.link.start();
    await until(() => t.link.state().status === "connected", "connected");
    await t.link.unpair();
    expect(t.link.state()).toMatchObject({ status: "disconnected", paired: false });
    expect(await t.ids.load()).toBeNull();
    expect(t.kv.data.has("daemonKey")).toBe(false);
    expect(t.session.data.has("linkTicket"), "the ticket goes with the pairing").toBe(false);
  });

  it("shows the daemon's name for this browser, and renames it there while connected", async () => {
    const t = await setup();
    t.daemon.daemonName = "Chrome on Linux (2)"; // another browser had the name first
    await t.link.start();
    await t.link.pair();
    await until(() => t.link.state().status === "connected", "connected");
    expect(t.link.state().deviceName, "the daemon's distinct name wins").toBe("Chrome on Linux (2)");
    expect(t.kv.data.get("deviceName")).toBe("Chrome on Linux (2)");

    t.daemon.takenNames = ["Work"];
    await expect(t.link.setDeviceName("Work")).rejects.toThrow(/already named "Work"/);
    expect(t.link.state().deviceName, "a refused rename changes nothing").toBe("Chrome on Linux (2)");
    expect((await t.link.setDeviceName("  Home   laptop ")).deviceName).toBe("Home laptop");
    expect(t.daemon.daemonName, "the daemon's store has the new name").toBe("Home laptop");
    expect(t.daemon.last.methods()).toContain("torii/device/rename");
  });

  it("validates settings", async () => {
    const t = await setup();
    await t.link.start();
    await expect(t.link.setDaemonUrl("http://127.0.0.1:7317/acp")).rejects.toThrow(/ws:\/\//);
    await expect(t.link.setDeviceName("   ")).rejects.toThrow(/empty/);
    expect((await t.link.setDeviceName("  Work   laptop ")).deviceName).toBe("Work laptop");
    expect((await t.link.setDaemonUrl("ws://localhost:9000/acp")).daemonUrl).toBe("ws://localhost:9000/acp");
  });
});

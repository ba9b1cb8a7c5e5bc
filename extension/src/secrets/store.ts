// The person's secrets, encrypted at rest (SECURITY I-69). Each record is AES-GCM ciphertext under
// one non-extractable key kept, like the device key (I-13), only as a structured-cloned CryptoKey
// in the extension's IndexedDB, so no script (ours included) can read the key's bytes. The
// record's name, kind and origins are the additional authenticated data: a record whose origins
// were edited in storage does not decrypt. Nothing here is reachable from the link, a web page or
// a content script: only the worker opens this database (the extension's origin).

import { NAME_RE } from "./template.js";
import { base32Decode, totp } from "./totp.js";

type SecretKind = "password" | "token" | "totp";
const SECRET_KINDS: readonly SecretKind[] = ["password", "token", "totp"];

/** What anyone but the worker may know of a secret: never its value. */
export interface SecretInfo {
  name: string;
  kind: SecretKind;
  origins: string[];
}

export interface SecretRecord extends SecretInfo {
  iv: Uint8Array;
  ct: ArrayBuffer;
}

/** Where records, the key and the lock live; IndexedDB in the worker, memory in unit tests. */
export interface SecretBackend {
  key(): Promise<CryptoKey | undefined>;
  setKey(k: CryptoKey): Promise<void>;
  all(): Promise<SecretRecord[]>;
  get(name: string): Promise<SecretRecord | undefined>;
  put(r: SecretRecord): Promise<void>;
  delete(name: string): Promise<void>;
  locked(): Promise<boolean>;
  setLocked(v: boolean): Promise<void>;
}

export type SecretField = "name" | "kind" | "value" | "origins";

export class SecretError extends Error {
  override name = "SecretError";
  constructor(
    readonly code: "secret_not_found" | "secret_store_locked" | "invalid",
    message: string,
    /** The field of a new secret at fault, so the options page can mark it. */
    readonly field?: SecretField,
  ) {
    super(message);
  }
}

const MAX_SECRETS = 200;
const MAX_VALUE = 4096;
const MIN_VALUE = 4;
const MAX_ORIGINS = 20;
/** How many 30 s steps back a seed's codes stay masked: a page may show a code it was given. */
const TOTP_BACK = 20;

/**
 * One origin a secret may be used on, canonical (scheme://host[:port], as `self.origin` says it):
 * http(s) only, no path, query, fragment or userinfo; a bare host means https.
 */
export function canonicalOrigin(s: string): string {
  const t = s.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(t) ? t : `https://${t}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new SecretError("invalid", `"${t.slice(0, 80)}" is not an origin (e.g. https://example.com)`);
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw new SecretError("invalid", `${u.protocol} origins cannot hold secrets; use http(s)`);
  if (u.username || u.password || u.search || u.hash || (u.pathname !== "/" && u.pathname !== "")) {
    throw new SecretError("invalid", `"${t.slice(0, 80)}": give an origin only (scheme, host, port), no path`);
  }
  if (u.hostname.includes("*")) throw new SecretError("invalid", "a secret's origin names one site exactly: no wildcards");
  return u.origin;
}

/**
 * What is wrong with a new secret, naming the field; undefined when it may be stored. Pure, so the
 * options page shows the same refusal beside the field before anything is sent.
 */
export function secretProblem(name: string, kind: string, value: string, origins: string[]): { field: SecretField; message: string } | undefined {
  if (!NAME_RE.test(name)) return { field: "name", message: "name: letters, digits, _ . - (up to 64), starting with a letter or digit" };
  if (!SECRET_KINDS.includes(kind as SecretKind)) return { field: "kind", message: `kind: one of ${SECRET_KINDS.join(", ")}` };
  if (typeof value !== "string" || value.length === 0) return { field: "value", message: "value: empty" };
  if (value.length > MAX_VALUE) return { field: "value", message: `value: at most ${MAX_VALUE} characters` };
  // Shorter ones could not be told from page text when results are masked (and are no secret).
  if (kind !== "totp" && [...value].length < MIN_VALUE) return { field: "value", message: `value: at least ${MIN_VALUE} characters` };
  if (kind === "totp") {
    try {
      if (base32Decode(value).length < 10) throw new Error("the seed is shorter than 80 bits");
    } catch (e) {
      return { field: "value", message: `value: ${(e as Error).message}` };
    }
  }
  let os: string[];
  try {
    os = [...new Set(origins.map(canonicalOrigin))];
  } catch (e) {
    return { field: "origins", message: (e as Error).message };
  }
  if (os.length === 0) return { field: "origins", message: "origins: give at least one origin the secret may be used on" };
  if (os.length > MAX_ORIGINS) return { field: "origins", message: `origins: at most ${MAX_ORIGINS}` };
  return undefined;
}

function aad(i: SecretInfo): Uint8Array {
  return new TextEncoder().encode(JSON.stringify([i.name, i.kind, i.origins]));
}

interface Loaded {
  key: CryptoKey | undefined;
  locked: boolean;
  records: Map<string, SecretRecord>;
}

export class SecretStore {
  /**
   * The stored state as read once (ciphertext, the key handle, the lock), so a fill costs a
   * decryption and no database round trip. Only this store writes the database (the worker is its
   * one owner), and every write updates both.
   */
  private loaded: Promise<Loaded> | null = null;
  /** Bumped by every change of the records: what the mask was built from is stale. */
  private changes = 0;

  constructor(private readonly b: SecretBackend) {}

  private state(): Promise<Loaded> {
    this.loaded ??= (async () => {
      const [key, locked, all] = await Promise.all([this.b.key(), this.b.locked(), this.b.all()]);
      return { key, locked, records: new Map(all.map((r) => [r.name, r])) };
    })().catch((e: unknown) => {
      this.loaded = null;
      throw e;
    });
    return this.loaded;
  }

  private async keyOrNew(): Promise<CryptoKey> {
    const st = await this.state();
    if (st.key) return st.key;
    const fresh = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
    await this.b.setKey(fresh);
    st.key = fresh;
    return fresh;
  }

  async list(): Promise<SecretInfo[]> {
    return [...(await this.state()).records.values()].map((r) => ({ name: r.name, kind: r.kind, origins: [...r.origins] })).sort((x, y) => x.name.localeCompare(y.name));
  }

  async locked(): Promise<boolean> {
    return (await this.state()).locked;
  }

  async setLocked(v: boolean): Promise<void> {
    const st = await this.state();
    await this.b.setLocked(v);
    st.locked = v;
  }

  /** Adds or replaces a secret; every field is checked before anything is stored. */
  async add(name: string, kind: string, value: string, origins: string[]): Promise<SecretInfo> {
    const problem = secretProblem(name, kind, value, origins);
    if (problem) throw new SecretError("invalid", problem.message, problem.field);
    const os = [...new Set(origins.map(canonicalOrigin))];
    const st = await this.state();
    if (!st.records.has(name) && st.records.size >= MAX_SECRETS) throw new SecretError("invalid", `at most ${MAX_SECRETS} secrets`);
    const info: SecretInfo = { name, kind: kind as SecretKind, origins: os };
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv: iv as BufferSource, additionalData: aad(info) as BufferSource }, await this.keyOrNew(), new TextEncoder().encode(value));
    const rec: SecretRecord = { ...info, iv, ct };
    await this.b.put(rec);
    st.records.set(name, rec);
    this.changes++;
    return info;
  }

  async remove(name: string): Promise<boolean> {
    const st = await this.state();
    const had = st.records.has(name);
    await this.b.delete(name);
    st.records.delete(name);
    this.changes++;
    return had;
  }

  /** A number that changes whenever a secret is added, replaced or removed. */
  get version(): number {
    return this.changes;
  }

  /**
   * Every secret's values, to withhold from what the agent reads (SECURITY I-77): the lock stops
   * their use, never their masking. A seed gives its one-time codes from `TOTP_BACK` steps ago to
   * one step ahead. A record that does not decrypt is skipped: nothing can have typed its value.
   */
  async maskValues(nowMs = Date.now()): Promise<{ name: string; origins: string[]; values: string[] }[]> {
    const st = await this.state();
    const key = st.key;
    if (!key) return [];
    const out: { name: string; origins: string[]; values: string[] }[] = [];
    for (const r of st.records.values()) {
      const info: SecretInfo = { name: r.name, kind: r.kind, origins: [...r.origins] };
      let plain: string;
      try {
        plain = new TextDecoder().decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv: r.iv as BufferSource, additionalData: aad(info) as BufferSource }, key, r.ct));
      } catch {
        continue;
      }
      let values = [plain];
      if (r.kind === "totp") {
        const seed = base32Decode(plain);
        values = [];
        for (let k = -TOTP_BACK; k <= 1; k++) values.push(await totp(seed, nowMs + k * 30_000));
      }
      out.push({ name: r.name, origins: info.origins, values });
    }
    return out;
  }

  /**
   * The secrets a call names, with their values (a one-time code for a totp seed), for the one
   * engine call that substitutes them. Fails closed: locked, no key, a record that does not
   * decrypt, all are secret_store_locked; an unknown name is secret_not_found.
   */
  async resolve(names: string[], nowMs = Date.now()): Promise<Map<string, { value: string; info: SecretInfo }>> {
    const out = new Map<string, { value: string; info: SecretInfo }>();
    if (names.length === 0) return out;
    let st: Loaded;
    try {
      st = await this.state();
    } catch {
      throw new SecretError("secret_store_locked", "the secret store cannot be opened; nothing was filled");
    }
    if (st.locked) throw new SecretError("secret_store_locked", "the person has locked the secret store; nothing was filled");
    const key = st.key;
    for (const n of names) {
      const r = st.records.get(n);
      if (!r) throw new SecretError("secret_not_found", `no secret named ${n}; nothing was filled`);
      if (!key) throw new SecretError("secret_store_locked", "the secret store's key is gone; the person must add the secrets again");
      const info: SecretInfo = { name: r.name, kind: r.kind, origins: [...r.origins] };
      let plain: string;
      try {
        plain = new TextDecoder().decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv: r.iv as BufferSource, additionalData: aad(info) as BufferSource }, key, r.ct));
      } catch {
        throw new SecretError("secret_store_locked", `secret ${n} does not decrypt (its record was changed outside the options page); nothing was filled`);
      }
      out.set(n, { value: r.kind === "totp" ? await totp(base32Decode(plain), nowMs) : plain, info });
    }
    return out;
  }
}

/** For unit tests: the same store without persistence. */
export class MemorySecretBackend implements SecretBackend {
  private k: CryptoKey | undefined;
  private readonly recs = new Map<string, SecretRecord>();
  private lock = false;
  async key() {
    return this.k;
  }
  async setKey(k: CryptoKey) {
    this.k = k;
  }
  async all() {
    return [...this.recs.values()];
  }
  async get(n: string) {
    return this.recs.get(n);
  }
  async put(r: SecretRecord) {
    this.recs.set(r.name, r);
  }
  async delete(n: string) {
    this.recs.delete(n);
  }
  async locked() {
    return this.lock;
  }
  async setLocked(v: boolean) {
    this.lock = v;
  }
  /** Tests: tamper with a stored record (or drop the key) as another program could. */
  raw(n: string): SecretRecord | undefined {
    return this.recs.get(n);
  }
}

// The device identity: an ECDSA P-256 keypair whose private key is a non-extractable CryptoKey.
// SECURITY: the private key is stored only as a structured-cloned CryptoKey in IndexedDB, so no
// script (ours included) can ever read its bytes; unpairing deletes it.

import { exportPublicKey, generateKeyPair } from "../shared/ecdsa.js";
import type { Bytes } from "../shared/transcript.js";

export interface Identity {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** 65-byte uncompressed public point, as it travels on the wire. */
  publicRaw: Bytes;
}

export interface IdentityStore {
  load(): Promise<Identity | null>;
  /** A fresh identity, not yet stored: it is kept only once a pairing is approved. */
  generate(): Promise<Identity>;
  save(id: Identity): Promise<void>;
  clear(): Promise<void>;
}

class IdentityError extends Error {
  override name = "IdentityError";
}

async function fromPair(pair: CryptoKeyPair): Promise<Identity> {
  if (pair.privateKey.extractable) throw new IdentityError("device private key must be non-extractable");
  return { privateKey: pair.privateKey, publicKey: pair.publicKey, publicRaw: await exportPublicKey(pair.publicKey) };
}

const DB_NAME = "torii";
const STORE = "identity";
const RECORD = "device";

function req<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error ?? new IdentityError("IndexedDB request failed"));
  });
}

/** IndexedDB-backed store used by the service worker. */
export class IndexedDbIdentityStore implements IdentityStore {
  private db: Promise<IDBDatabase> | null = null;

  private open(): Promise<IDBDatabase> {
    this.db ??= new Promise((resolve, reject) => {
      const r = indexedDB.open(DB_NAME, 1);
      r.onupgradeneeded = () => r.result.createObjectStore(STORE);
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error ?? new IdentityError("cannot open IndexedDB"));
    });
    return this.db;
  }

  private async tx(mode: IDBTransactionMode): Promise<IDBObjectStore> {
    return (await this.open()).transaction(STORE, mode).objectStore(STORE);
  }

  async load(): Promise<Identity | null> {
    const rec = (await req((await this.tx("readonly")).get(RECORD))) as CryptoKeyPair | undefined;
    if (!rec?.privateKey || !rec.publicKey) return null;
    return fromPair(rec);
  }

  async generate(): Promise<Identity> {
    return fromPair(await generateKeyPair());
  }

  async save(id: Identity): Promise<void> {
    const pair: CryptoKeyPair = { privateKey: id.privateKey, publicKey: id.publicKey };
    await req((await this.tx("readwrite")).put(pair, RECORD));
  }

  async clear(): Promise<void> {
    await req((await this.tx("readwrite")).delete(RECORD));
  }
}

/** In-memory store for unit tests: same key handling, no persistence. */
export class MemoryIdentityStore implements IdentityStore {
  private current: Identity | null = null;
  async load(): Promise<Identity | null> {
    return this.current;
  }
  async generate(): Promise<Identity> {
    return fromPair(await generateKeyPair());
  }
  async save(id: Identity): Promise<void> {
    this.current = id;
  }
  async clear(): Promise<void> {
    this.current = null;
  }
}

// The secret store's IndexedDB backend, in the worker's own origin (content scripts and pages
// cannot open it). Its own database, apart from the device identity's.
import type { SecretBackend, SecretRecord } from "./store.js";

const DB = "torii-secrets";
const RECORDS = "secrets";
const META = "meta";

function req<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error ?? new Error("IndexedDB request failed"));
  });
}

export class IndexedDbSecretBackend implements SecretBackend {
  private db: Promise<IDBDatabase> | null = null;

  private open(): Promise<IDBDatabase> {
    this.db ??= new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open(DB, 1);
      r.onupgradeneeded = () => {
        r.result.createObjectStore(RECORDS, { keyPath: "name" });
        r.result.createObjectStore(META);
      };
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error ?? new Error("cannot open IndexedDB"));
    }).catch((e: unknown) => {
      this.db = null;
      throw e;
    });
    return this.db;
  }

  private async store(name: string, mode: IDBTransactionMode): Promise<IDBObjectStore> {
    return (await this.open()).transaction(name, mode).objectStore(name);
  }

  async key(): Promise<CryptoKey | undefined> {
    const k = (await req((await this.store(META, "readonly")).get("key"))) as CryptoKey | undefined;
    // SECURITY I-69: a key that could be exported is not ours.
    return k && !k.extractable ? k : undefined;
  }
  async setKey(k: CryptoKey): Promise<void> {
    await req((await this.store(META, "readwrite")).put(k, "key"));
  }
  async all(): Promise<SecretRecord[]> {
    return (await req((await this.store(RECORDS, "readonly")).getAll())) as SecretRecord[];
  }
  async get(name: string): Promise<SecretRecord | undefined> {
    return (await req((await this.store(RECORDS, "readonly")).get(name))) as SecretRecord | undefined;
  }
  async put(r: SecretRecord): Promise<void> {
    await req((await this.store(RECORDS, "readwrite")).put(r));
  }
  async delete(name: string): Promise<void> {
    await req((await this.store(RECORDS, "readwrite")).delete(name));
  }
  async locked(): Promise<boolean> {
    return (await req((await this.store(META, "readonly")).get("locked"))) === true;
  }
  async setLocked(v: boolean): Promise<void> {
    await req((await this.store(META, "readwrite")).put(v, "locked"));
  }
}

// ECDSA P-256 over SHA-256 with P1363 (r‖s) signatures: WebCrypto's native form and the wire form.

import type { Bytes } from "./transcript.js";

const ALG = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIG = { name: "ECDSA", hash: "SHA-256" } as const;

class KeyFormatError extends Error {
  override name = "KeyFormatError";
}

/** Imports a 65-byte uncompressed P-256 point as a verify-only key. */
async function importPublicKey(raw: Uint8Array): Promise<CryptoKey> {
  if (raw.length !== 65 || raw[0] !== 0x04) throw new KeyFormatError("public key must be a 65-byte uncompressed P-256 point");
  return crypto.subtle.importKey("raw", new Uint8Array(raw), ALG, true, ["verify"]);
}

export async function exportPublicKey(key: CryptoKey): Promise<Bytes> {
  return new Uint8Array(await crypto.subtle.exportKey("raw", key));
}

export async function sign(privateKey: CryptoKey, data: Bytes): Promise<Bytes> {
  return new Uint8Array(await crypto.subtle.sign(SIG, privateKey, data));
}

/** False (never throws) for a malformed key or signature: callers treat any failure the same way. */
export async function verify(publicRaw: Uint8Array, signature: Uint8Array, data: Bytes): Promise<boolean> {
  try {
    if (signature.length !== 64) return false;
    const key = await importPublicKey(publicRaw);
    return await crypto.subtle.verify(SIG, key, new Uint8Array(signature), data);
  } catch {
    return false;
  }
}

/** A fresh keypair whose private half can never be exported (it lives only inside IndexedDB). */
export async function generateKeyPair(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(ALG, false, ["sign", "verify"]);
}

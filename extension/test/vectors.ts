// Loads the shared protocol vectors (testdata/vectors.json at the repository root), which the
// Go tests read too.

import { readFileSync } from "node:fs";

interface PairVector {
  name: string;
  requestId: string;
  origin: string;
  deviceKeyB64: string;
  daemonKeyB64: string;
  clientNonceB64: string;
  serverNonceB64: string;
  transcriptHex: string;
  sha256Hex: string;
  code: string;
  otp: string;
  otpProofB64: string;
}

interface AuthVector {
  name: string;
  role: "daemon" | "device";
  connectionId: string;
  deviceId: string;
  origin: string;
  deviceKeyB64: string;
  daemonKeyB64: string;
  clientNonceB64: string;
  serverNonceB64: string;
  transcriptHex: string;
  signerPublicKeyB64: string;
  signatureB64: string;
  badSignatureB64: string;
}

export interface KeyVector {
  jwk: JsonWebKey;
  rawB64: string;
}

export interface Vectors {
  pairing: PairVector[];
  auth: AuthVector[];
  keys: { device: KeyVector; daemon: KeyVector };
}

export const vectors: Vectors = JSON.parse(
  readFileSync(new URL("../../testdata/vectors.json", import.meta.url), "utf8"),
) as Vectors;

export async function importSigningKey(k: KeyVector): Promise<CryptoKey> {
  return crypto.subtle.importKey("jwk", k.jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
}

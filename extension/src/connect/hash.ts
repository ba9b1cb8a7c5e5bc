// Parses the managed-launch fragment `#daemon=<ws url>&otp=<secret>`.

export interface LaunchParams {
  daemonUrl: string;
  otp: string;
  /** `torii launch --permissive`: a dedicated profile starts with the permissive policy. */
  policy?: "permissive";
}

export function parseLaunchHash(hash: string): LaunchParams | null {
  const p = new URLSearchParams(hash.startsWith("#") ? hash.slice(1) : hash);
  const daemonUrl = p.get("daemon") ?? "";
  const otp = p.get("otp") ?? "";
  if (daemonUrl === "" || otp === "") return null;
  return p.get("policy") === "permissive" ? { daemonUrl, otp, policy: "permissive" } : { daemonUrl, otp };
}

// Typed failures of the link handshake; link.ts maps each to a state and a retry decision.

/** The daemon could not prove it is the daemon we paired with. Never retried automatically. */
export class DaemonIdentityError extends Error {
  override name = "DaemonIdentityError";
}

/** The daemon answered with something the protocol does not allow (missing field, wrong version). */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

/** The daemon no longer accepts this device (revoked, unknown, or its signature was refused). */
export class DeviceRejectedError extends Error {
  override name = "DeviceRejectedError";
}

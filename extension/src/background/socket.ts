// The part of the browser WebSocket the link uses, so tests can drive the link with a fake.

export interface CloseInfo {
  code: number;
  reason: string;
}

export interface SocketLike {
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: CloseInfo) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type SocketFactory = (url: string, protocols?: string[]) => SocketLike;

// MV3 service workers may open ws:// and wss:// sockets to any host without host permissions;
// the daemon checks our Origin (chrome-extension://<id>) before it upgrades.
export const browserSocket: SocketFactory = (url, protocols) => new WebSocket(url, protocols) as unknown as SocketLike;

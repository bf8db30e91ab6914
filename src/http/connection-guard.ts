import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { timerDelay } from '../contract/timer-delay.js';

/*
 * What a connection may cost a local server before it has sent a request (issue 34: 256 sockets
 * that sent nothing, reopened as they closed, held every connection of the webhook receiver):
 *
 * - a connection that sends no byte within `firstByteMs` is closed (node's own timeouts, for the
 *   headers and the request, take over once a byte arrived);
 * - one remote address (an IPv6 address counts with its whole /64, which one machine usually
 *   holds) has at most `perAddress` connections open; one more is closed at once;
 * - at `max` connections in all, a new connection closes the oldest one that has sent nothing
 *   yet, and takes its place; when every open connection has sent something, the new one is
 *   closed instead. A flood of silent sockets therefore never keeps a real client out.
 *
 * Node's `server.maxConnections` is not used: it closes the new connection before anything can
 * choose which one to close.
 */

/** The limits of {@link guardConnections}. */
export interface ConnectionLimits {
  max: number;
  perAddress: number;
  /** 0: no timeout of silence. */
  firstByteMs: number;
}

/** Why a connection was closed by the guard. */
export type ConnectionRefusal = 'address_cap' | 'total_cap' | 'silent_evicted' | 'first_byte_timeout';

/** One open connection the guard counts. */
interface Entry {
  readonly group: string;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** The group of an address the per-address cap counts: an IPv4 address, or an IPv6 address's /64 (`2001:db8:0:1::/64`). */
export function addressGroup(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  // Without a zone (`fe80::1%eth0`); `::` stands for as many zero groups as the address lacks.
  const [head = '', tail] = address.split('%', 1)[0]!.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : new Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  const prefix = [...left, ...zeros, ...right].slice(0, 4).map((group) => (Number.parseInt(group, 16) || 0).toString(16));
  return `${prefix.join(':')}::/64`;
}

/**
 * A connection counts until the server has ended its side (an answer with `connection: close`, a
 * 408): then it only waits for the client's FIN.
 */
const closing = (socket: Socket): boolean => socket.writableEnded || socket.destroyed;

/**
 * Counts the connections of one node server (one run of a local server) and closes what the
 * limits forbid; `onClosed` hears each closing (for a debug line).
 */
export function guardConnections(
  server: Server,
  limits: ConnectionLimits,
  onClosed: (reason: ConnectionRefusal, remote: string | undefined) => void,
): void {
  const open = new Map<Socket, Entry>();
  const byGroup = new Map<string, Set<Socket>>();
  /** Connections that had sent nothing when last looked at, oldest first. */
  const silent = new Set<Socket>();

  const forget = (socket: Socket): void => {
    const entry = open.get(socket);
    if (entry === undefined) return;
    open.delete(socket);
    silent.delete(socket);
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    const group = byGroup.get(entry.group);
    group?.delete(socket);
    if (group?.size === 0) byGroup.delete(entry.group);
  };

  const close = (socket: Socket, reason: ConnectionRefusal): void => {
    const remote = socket.remoteAddress;
    forget(socket);
    socket.destroy();
    onClosed(reason, remote);
  };

  /** Stops counting the connections among `sockets` that are closing; at a cap only, so a flood costs no sweep per connection below it. */
  const pruneClosing = (sockets: Iterable<Socket>): void => {
    for (const socket of sockets) if (closing(socket)) forget(socket);
  };

  /** The oldest open connection that has still sent nothing; those that have are dropped from the list on the way. */
  const oldestSilent = (): Socket | undefined => {
    for (const socket of silent) {
      if (socket.bytesRead === 0 && !closing(socket)) return socket;
      silent.delete(socket);
    }
    return undefined;
  };

  /** Whether there is room for one more connection from `group`, closing the oldest silent one when only the total cap is in the way. */
  const makeRoom = (group: string): ConnectionRefusal | undefined => {
    const mine = byGroup.get(group);
    if (mine !== undefined && mine.size >= limits.perAddress) pruneClosing(mine);
    if ((byGroup.get(group)?.size ?? 0) >= limits.perAddress) return 'address_cap';
    if (open.size >= limits.max) pruneClosing([...open.keys()]);
    if (open.size < limits.max) return undefined;
    const evicted = oldestSilent();
    if (evicted === undefined) return 'total_cap';
    close(evicted, 'silent_evicted');
    return undefined;
  };

  server.on('connection', (socket: Socket) => {
    const group = addressGroup(socket.remoteAddress);
    const refused = makeRoom(group);
    if (refused !== undefined) return close(socket, refused);
    const entry: Entry = { group, timer: undefined };
    if (limits.firstByteMs > 0) {
      entry.timer = setTimeout(() => {
        entry.timer = undefined;
        if (socket.bytesRead === 0) close(socket, 'first_byte_timeout');
        else silent.delete(socket);
      }, timerDelay(limits.firstByteMs));
      entry.timer.unref();
    }
    open.set(socket, entry);
    let mine = byGroup.get(group);
    if (mine === undefined) byGroup.set(group, (mine = new Set()));
    mine.add(socket);
    silent.add(socket);
    socket.once('close', () => forget(socket));
  });
}

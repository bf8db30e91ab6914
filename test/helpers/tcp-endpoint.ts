import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP endpoint on 127.0.0.1 that forwards to a target port which the test moves, as a managed
 * Redis's DNS name or load balancer moves to the promoted replica: new connections go to the new
 * target, connections already open stay where they were (unless `move` is asked to drop them).
 */
export interface TcpEndpoint {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** New connections go to `targetPort` from now on; with `dropOpen`, the open ones are closed. */
  move(targetPort: number, options?: { dropOpen?: boolean }): void;
  /** Stops forwarding on every connection, open or opened from now on (both ways); the bytes wait. */
  hold(): void;
  /** Forwards again what waited, and what follows. */
  release(): void;
  close(): Promise<void>;
}

export async function startTcpEndpoint(targetPort: number): Promise<TcpEndpoint> {
  let target = targetPort;
  let held = false;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
    if (held) for (const socket of [client, upstream]) socket.pause();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    move(next, options = {}) {
      target = next;
      if (options.dropOpen) for (const socket of open) socket.destroy();
    },
    hold() {
      held = true;
      for (const socket of open) socket.pause();
    },
    release() {
      held = false;
      for (const socket of open) socket.resume();
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { createServer } from 'node:net';

/** Ports this test process was given: the OS may hand the same free port out twice in a row. */
const given = new Set<number>();

function pickPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A free TCP port on 127.0.0.1: the OS's pick, released again before it is returned (the caller
 * binds it a moment later), and never one this process was given before (`[await freePort(),
 * await freePort()]` could otherwise be the same port twice, before either was bound).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await pickPort();
    if (given.has(port)) continue;
    given.add(port);
    return port;
  }
  throw new Error('no free port on 127.0.0.1 that was not handed out already');
}

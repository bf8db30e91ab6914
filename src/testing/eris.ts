import { Agent as HttpsAgent } from 'node:https';
import { connect, type Socket } from 'node:net';

/*
 * Eris's REST always calls `https.request` with `rest.domain` as the host and no port option, so
 * it cannot speak plain HTTP to 127.0.0.1:<port> by options alone. It does take an HTTP agent
 * (`rest.agent`): the agent below says `https:` (what `https.request` checks) and hands Eris a
 * plain TCP socket to the fake REST. Everything above the socket is Eris's own code; only TLS is
 * skipped. The gateway URL then comes from `GET /gateway/bot`, as from Discord's.
 */

/** An agent for `https.request` that connects in clear to 127.0.0.1:`port`, wherever asked. */
class PlainToLocalAgent extends HttpsAgent {
  readonly #port: number;

  constructor(port: number) {
    super({ keepAlive: false });
    this.#port = port;
  }

  override createConnection(): Socket {
    return connect({ host: '127.0.0.1', port: this.#port });
  }
}

/** Eris's `rest` options that reach the fake REST API at `restUrl`: `new Client(token, { rest: erisRestOptions(url) })`. */
export function erisRestOptions(restUrl: string): { agent: HttpsAgent; domain: string } {
  return { agent: new PlainToLocalAgent(Number(new URL(restUrl).port)), domain: '127.0.0.1' };
}

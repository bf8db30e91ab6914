/**
 * The container's health probe (the Dockerfile's HEALTHCHECK, deploy/compose.yaml's healthcheck):
 *
 *   node /app/dist/cli/healthcheck.js
 *
 * asks `GET /healthz` where the daemon's health server listens, which is what
 * `LISTING_AGENT_HEALTH_LISTEN` says (the image sets it, and it wins over a config file's
 * `health.listen`; unset or empty, the default 127.0.0.1:9464). A wildcard host is asked on the
 * loopback of its family: 0.0.0.0 on 127.0.0.1, :: on ::1. Exit 0 when it answers 2xx within 4 s
 * (the HEALTHCHECK's timeout is 5 s), else 1 with one line on stderr that Docker keeps in the
 * health log. Beside main.ts, the only module of the package that touches `process`: its env and
 * its exit code. It loads nothing but the listen address's reader, not the CLI.
 */
import { HEALTH_LISTEN_DEFAULT, LISTEN_ADDRESS_PROBLEM, parseListenAddress } from '../config/listen-address.js';
import type { ListenAddress } from '../http/listen-error.js';
import { errorMessage } from '../errors.js';

const VARIABLE = 'LISTING_AGENT_HEALTH_LISTEN';
const TIMEOUT_MS = 4_000;

/** The URL of /healthz for a server listening at `address`: a wildcard host asked on loopback. */
function healthzUrl(address: ListenAddress): string {
  const host = address.host === '0.0.0.0' ? '127.0.0.1' : address.host === '::' ? '::1' : address.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}/healthz`;
}

function fail(line: string): never {
  process.stderr.write(`listing-agent healthcheck: ${line}\n`);
  process.exit(1);
}

const given = process.env[VARIABLE]?.trim();
const listen = given === undefined || given === '' ? HEALTH_LISTEN_DEFAULT : given;
const address = parseListenAddress(listen, '127.0.0.1');
if (address === undefined) {
  fail(`${VARIABLE}=${listen}: ${LISTEN_ADDRESS_PROBLEM}`);
} else {
  const url = healthzUrl(address);
  fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) }).then(
    async (response) => {
      await response.body?.cancel();
      if (!response.ok) fail(`${url} answered ${response.status}`);
      // At once: an idle keep-alive socket must not hold the probe open.
      process.exit(0);
    },
    (error: unknown) => {
      // fetch's own message is "fetch failed"; its cause says why (ECONNREFUSED, a timeout).
      const reason = error instanceof Error && error.cause instanceof Error ? error.cause : error;
      const cause = errorMessage(reason);
      fail(`${url}: no answer (${cause}); the health server listens where ${VARIABLE} says`);
    },
  );
}

/**
 * The client examples of docs/client.md, one per area, in a file the type checker reads and a test runs
 * against the emulator (test/integration/client/readme-tour.test.ts), so the docs cannot drift. It
 * imports the package as a bot does (`listing-agent/client`), so it runs from the installed package too.
 */
import {
  createListingClient,
  createOAuthClient,
  createOAuthSession,
  createMemoryTokenStore,
  RateLimitError,
  type ListingClientOptions,
} from 'listing-agent/client';

/** Where the tour runs: the service's base URLs (the emulator's in the test). */
export interface TourTarget {
  v1BaseUrl: string;
  v0BaseUrl: string;
  authBaseUrl: string;
  projectToken: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Opens the authorize URL as the user would and returns the URL the browser lands on. */
  approve(authorizeUrl: string): Promise<string>;
  /** A URL that receives webhook deliveries. */
  webhookUrl: string;
  transport?: Pick<ListingClientOptions, 'clock' | 'retry'>;
}

/** Runs every example; returns what they printed. */
export async function clientTour(target: TourTarget): Promise<string[]> {
  const out: string[] = [];
  const log = (...parts: unknown[]) => out.push(parts.map(String).join(' '));

  // --- Project token: @me on v1, raw on v0; the bot ID comes from the token.
  await using bot = createListingClient({
    projectToken: target.projectToken,
    v1BaseUrl: target.v1BaseUrl,
    v0BaseUrl: target.v0BaseUrl,
    ...target.transport,
  });
  const project = await bot.projects.get();
  log('project', project.name, project.votes_total);
  await bot.metrics.update({ server_count: 1520, shard_count: 2 });
  await bot.metrics.batch([
    { metrics: { server_count: 1500 }, timestamp: new Date(Date.now() - 60_000) },
    { metrics: { server_count: 1520 }, timestamp: new Date() },
  ]);
  await bot.commands.set([{ name: 'ping', description: 'Replies with pong', type: 1 }]);
  await bot.projects.update({ headline: { en: 'The friendliest bot around' } });
  const announcement = await bot.announcements.create({ title: 'v2 is out', content: 'New commands and faster replies.' });
  log('announced', announcement.title);
  try {
    await bot.announcements.create({ title: 'Too soon', content: 'A second one within 4 hours.' });
  } catch (error) {
    if (error instanceof RateLimitError) log('cooldown', Math.round((error.retryAfterMs ?? 0) / 3_600_000), 'h');
  }
  for await (const vote of bot.votes.iterate({ startDate: new Date(Date.now() - 12 * 3_600_000) })) {
    log('vote', vote.user_id, vote.weight);
  }
  const status = await bot.votes.status('1000000000000000002');
  log('voted now?', status !== null);
  await bot.v0.postStats({ shards: [800, 720] });
  log('v0 stats', JSON.stringify(await bot.v0.getStats()));
  log('v0 voted?', await bot.v0.hasVoted('200000000000000002'));

  // --- OAuth 2.1 with PKCE: authorize, exchange, then a session that refreshes itself.
  const oauth = createOAuthClient({
    clientId: target.clientId,
    clientSecret: target.clientSecret,
    redirectUri: target.redirectUri,
    v1BaseUrl: target.v1BaseUrl,
    authBaseUrl: target.authBaseUrl,
  });
  const pkce = oauth.createPkce();
  const state = crypto.randomUUID();
  const url = oauth.authorizeUrl({
    scopes: ['project.information.read', 'project.webhooks.read', 'project.webhooks.write', 'user.identify'],
    state,
    codeChallenge: pkce.challenge,
  });
  const { code } = oauth.parseCallback(await target.approve(url), state);
  const tokens = await oauth.exchangeCode({ code, codeVerifier: pkce.verifier });
  const store = createMemoryTokenStore(); // createFileTokenStore(path) keeps them across restarts
  const session = createOAuthSession({ oauth, tokens, tokenStore: store });
  await using app = createListingClient({ accessToken: session, v1BaseUrl: target.v1BaseUrl });
  log('me', (await app.users.me()).username);
  const webhook = await app.webhooks.create({ label: 'rewards', url: target.webhookUrl, allowHttpLoopback: true });
  log('webhook secret starts with', webhook.secret.slice(0, 4));
  await app.webhooks.test(webhook.id);
  await oauth.close();
  return out;
}
